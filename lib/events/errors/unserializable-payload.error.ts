import { InvalidOutboxEventError } from './invalid-outbox-event.error';

/** The payload holds a value JSON cannot carry faithfully (function, BigInt, cycle, class instance...). */
export class UnserializablePayloadError extends InvalidOutboxEventError {
  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(path, problem, { path }, 'OUTBOX_UNSERIALIZABLE_PAYLOAD');
  }
}
