import { OutboxError } from '../../common/errors/outbox.error';

export * from './consumer-retry.error';
export * from './unrecoverable-event.error';

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

/** What is wrong with an `@IdempotentHandler` found at bootstrap. */
export type IdempotentHandlerProblem =
  | 'not-a-controller'
  | 'not-an-event-handler'
  | 'filter-order'
  | 'unknown-connection'
  | 'duplicate-consumer'
  | 'missing-unique-index'
  | 'no-outbox-module';

/**
 * An `@IdempotentHandler` cannot work as declared: thrown while the application initializes, so
 * it fails to start, naming the handler (`ClassName.methodName`), the problem and the fix.
 */
export class IdempotentHandlerBootstrapError extends OutboxError {
  constructor(
    readonly handler: string,
    readonly problem: IdempotentHandlerProblem,
    detail: string,
    fix: string,
  ) {
    super(
      `@IdempotentHandler on ${handler}: ${detail}. ${fix}`,
      'OUTBOX_IDEMPOTENT_HANDLER_BOOTSTRAP',
      {
        handler,
        problem,
      },
    );
  }
}

/**
 * `@IdempotentHandler(...)` was given bad options, or put on a method it cannot serve.
 * Thrown when the class is defined (decoration time), so the app fails to start.
 */
export class IdempotentHandlerOptionsError extends OutboxError {
  constructor(
    readonly handler: string,
    readonly option: string,
    problem: string,
    fix: string,
  ) {
    super(
      `@IdempotentHandler on ${handler}: invalid "${option}": ${problem}. ${fix}`,
      'OUTBOX_IDEMPOTENT_HANDLER_OPTIONS',
      { handler, option },
    );
  }
}

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
