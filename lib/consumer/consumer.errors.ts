import { KafkaRetriableException } from '@nestjs/microservices';
import { OutboxError } from '../common/errors/outbox.error';

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

/**
 * Thrown out of an `@IdempotentHandler` method when its message must be delivered again, and
 * only then: the event could not be brought to an end now (applied, skipped as a duplicate, or
 * dead-lettered) because the failure or dead-letter store is unavailable, `OutboxModule` is not
 * initialized yet, a guard/pipe/interceptor rejected the message and `maxFailures` is not reached,
 * or kafkajs signalled a rebalance between attempts. Before throwing it the library pauses the
 * message's partition (`consumer.pause([{ topic, partitions }])`) and resumes it after a backoff
 * delay (`pausedForMs`); the other partitions keep flowing.
 *
 * How it reaches kafkajs, in Nest 11: an error thrown by an event handler goes to the exception
 * filters bound to it. `@IdempotentHandler` binds its own filter to the method, which Nest consults
 * before controller-level and global filters (method filters come first), and that filter returns
 * an observable that errors with this very error. `ServerKafka.handleEvent` awaits that observable
 * (`lastValueFrom`), so kafkajs' `eachMessage` rejects: kafkajs does not commit the offset and
 * fetches the message again (immediately after its own retry backoff, or once the partition is
 * resumed). A catch-all filter of the application therefore cannot turn it into an acknowledgement;
 * an interceptor that catches errors and returns a value still can (see the README).
 *
 * It extends `KafkaRetriableException` because that is what Nest's Kafka transport rethrows on its
 * request-reply path too; for event handlers the filter above is what makes it reach kafkajs.
 */
export class ConsumerRetryError extends KafkaRetriableException {
  readonly code = 'OUTBOX_CONSUMER_RETRY';

  constructor(
    message: string,
    readonly context: Record<string, unknown>,
    override readonly cause?: unknown,
    /** How long the partition was paused before this redelivery, when it was. */
    readonly pausedForMs?: number,
  ) {
    super(message);
    this.name = 'ConsumerRetryError';
  }
}

/** `instanceof`, or the same error from another copy of this package. */
export function isConsumerRetryError(error: unknown): error is ConsumerRetryError {
  return (
    error instanceof ConsumerRetryError ||
    (error instanceof Error && (error as { code?: unknown }).code === 'OUTBOX_CONSUMER_RETRY')
  );
}

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
