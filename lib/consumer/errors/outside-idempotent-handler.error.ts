import { OutboxError } from '../../common/errors/outbox.error';

/** `currentHandlerScope()` was called outside an `@IdempotentHandler` method's attempt. */
export class OutsideIdempotentHandlerError extends OutboxError {
  constructor() {
    super(
      'currentHandlerScope() was called outside an @IdempotentHandler attempt. Call it from the ' +
        'handler method, or from code it awaits, while the attempt runs.',
      'OUTBOX_OUTSIDE_IDEMPOTENT_HANDLER',
    );
  }
}
