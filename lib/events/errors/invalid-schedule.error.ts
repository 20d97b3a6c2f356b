import { InvalidOutboxEventError } from './invalid-outbox-event.error';

/**
 * The schedule of an emitted event (`availableAt`, `delayMs`, `waitForScheduled`) is not valid.
 * Thrown at emit time (inside the transaction, which then rolls back) or, for fixed values of
 * `@EmitsEvent`, when the class is defined.
 */
export class InvalidScheduleError extends InvalidOutboxEventError {
  constructor(field: string, problem: string, context: Record<string, unknown> = {}) {
    super(field, problem, context, 'OUTBOX_INVALID_SCHEDULE');
  }
}
