import { KafkaRetriableException } from '@nestjs/microservices';

/**
 * Thrown by an `@IdempotentHandler` method when the message must be delivered again: the handler
 * (or its transaction) failed and the event has not reached `maxFailures`, or the failure /
 * dead-letter record could not be written. It is a `KafkaRetriableException`, so Nest's Kafka
 * transport rethrows it from kafkajs' `eachMessage` unchanged (exception filters do not turn it
 * into a reply): kafkajs does not commit the offset, retries, and delivers the message again.
 */
export class ConsumerRetryError extends KafkaRetriableException {
  readonly code = 'OUTBOX_CONSUMER_RETRY';

  constructor(
    message: string,
    readonly context: Record<string, unknown>,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'ConsumerRetryError';
  }
}
