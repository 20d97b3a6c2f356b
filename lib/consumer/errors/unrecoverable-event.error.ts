/**
 * Throw it from an `@IdempotentHandler` method (or a guard or pipe in front of it) when the event
 * can never be applied (it refers to something that no longer exists, it breaks a business rule):
 * the message is dead-lettered at once, with reason `unrecoverable`, instead of being retried up
 * to `maxFailures`. Its message is kept in the dead letter's error history.
 *
 * ```ts
 * if (!order) throw new UnrecoverableEventError(`order ${event.orderId} does not exist`);
 * ```
 */
export class UnrecoverableEventError extends Error {
  readonly code = 'OUTBOX_UNRECOVERABLE_EVENT';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UnrecoverableEventError';
  }
}

/** `instanceof`, or the same error from another copy of this package. */
export function isUnrecoverableEventError(error: unknown): error is UnrecoverableEventError {
  return (
    error instanceof UnrecoverableEventError ||
    (error instanceof Error && (error as { code?: unknown }).code === 'OUTBOX_UNRECOVERABLE_EVENT')
  );
}
