import { OutboxError } from '../../common/errors/outbox.error';

/**
 * An emitted event breaks a rule (see `event.validator.ts`). Thrown by `OutboxEmitter.emit()` /
 * `@EmitsEvent` inside the transaction, which therefore rolls back.
 */
export class InvalidOutboxEventError extends OutboxError {
  constructor(
    readonly field: string,
    problem: string,
    context: Record<string, unknown> = {},
    code = 'OUTBOX_INVALID_EVENT',
  ) {
    super(`Invalid outbox event: ${field} ${problem}`, code, { field, ...context });
  }
}
