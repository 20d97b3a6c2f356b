import { OutboxError } from '../../common/errors/outbox.error';

/**
 * An `@IdempotentHandler` attempt ran longer than `handlerTimeoutMs`. The attempt counts as a
 * failure and its transaction is aborted. It is also the abort reason of the attempt's
 * `currentHandlerScope().signal`, and what the timed-out handler gets when it later reads
 * `currentHandlerScope().session` or starts an outbox transaction.
 */
export class HandlerTimeoutError extends OutboxError {
  constructor(
    readonly handler: string,
    readonly eventId: string,
    readonly timeoutMs: number,
  ) {
    super(
      `${handler} did not finish event ${eventId} within handlerTimeoutMs (${timeoutMs} ms); ` +
        'its transaction was aborted and the attempt counts as a failure. Raise handlerTimeoutMs ' +
        "(below the Kafka consumer's sessionTimeout) if the handler is slow, not stuck.",
      'OUTBOX_HANDLER_TIMEOUT',
      { handler, eventId, timeoutMs },
    );
  }
}
