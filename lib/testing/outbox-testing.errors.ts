import { OutboxError } from '../common/errors/outbox.error';

/** An `OutboxTesting` expectation that does not hold; the message lists what was emitted. */
export class OutboxExpectationError extends OutboxError {
  constructor(message: string) {
    super(message, 'OUTBOX_EXPECTATION_FAILED');
  }
}
