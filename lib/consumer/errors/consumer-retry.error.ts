import { KafkaRetriableException } from '@nestjs/microservices';

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
