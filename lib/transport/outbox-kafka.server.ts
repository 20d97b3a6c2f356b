import { Logger } from '@nestjs/common';
import { KafkaContext, KafkaOptions, ServerKafka } from '@nestjs/microservices';
import type { Consumer, KafkaMessage } from 'kafkajs';
import {
  anyIdempotentHandler,
  idempotentBatchTargetOf,
  type IdempotentBatchTarget,
} from '../consumer/nest/idempotent-batch.target';
import { consumeFetchedBatch } from './fetched-batch.consumer';
import { OutboxError } from '../common/errors/outbox.error';
import { EventTypeDeserializer } from './event-type.deserializer';
import { RawKeepingKafkaParser } from './raw-keeping-kafka.parser';

export type OutboxKafkaServerOptions = NonNullable<KafkaOptions['options']> & {
  /**
   * Topics to consume (e.g. one per aggregate type: `['Order']`). Every event of an aggregate stays
   * on one topic and partition, in commit order; handlers are still chosen by event type.
   */
  topics: string[];
  /** Header naming the event type. Default `ce_type` (what the relay writes). */
  eventTypeHeader?: string;
};

/**
 * Nest's Kafka transport, for outbox events: subscribes to the given topics and dispatches each
 * message to the `@EventPattern(eventType)` handler named by its `ce_type` header. Events nobody
 * handles are acknowledged and skipped (logged at debug), so one service can consume a topic
 * carrying more event types than it cares about. It also keeps the bytes of each message as
 * received, so `@IdempotentHandler` reads event ids and dead-letter copies from them rather than
 * from Nest's JSON-decoded copy.
 *
 * ```ts
 * app.connectMicroservice({
 *   strategy: new OutboxKafkaServer({
 *     client: { brokers: ['127.0.0.1:9092'] },
 *     consumer: { groupId: 'order-summaries' },
 *     topics: ['Order'],
 *   }),
 * });
 * ```
 */
export class OutboxKafkaServer extends ServerKafka {
  private readonly topics: string[];
  protected override readonly logger = new Logger(OutboxKafkaServer.name);

  constructor(options: OutboxKafkaServerOptions) {
    const { topics, eventTypeHeader, ...kafkaOptions } = options;
    if (
      !Array.isArray(topics) ||
      topics.length === 0 ||
      topics.some((t) => typeof t !== 'string' || !t)
    ) {
      throw new OutboxError(
        'OutboxKafkaServer needs "topics": the non-empty list of topics to consume, e.g. ["Order"].',
        'OUTBOX_INVALID_TRANSPORT_OPTIONS',
        { topics },
      );
    }
    super({
      ...kafkaOptions,
      deserializer: kafkaOptions.deserializer ?? new EventTypeDeserializer(eventTypeHeader),
    });
    this.topics = [...topics];
    this.parser = new RawKeepingKafkaParser(kafkaOptions.parser);
  }

  /**
   * Consumes with kafkajs' `eachBatch`: consecutive events of one `@IdempotentHandler` consumer
   * are applied in one transaction (`consumer.batch` of `OutboxModule`); every other message is
   * handled one at a time, as with `eachMessage`. See `consumeFetchedBatch`.
   */
  override async bindEvents(consumer: Consumer): Promise<void> {
    await consumer.subscribe({ ...(this.options.subscribe ?? {}), topics: this.topics });
    // Without an @IdempotentHandler, nothing batches: no message is read twice to find out.
    const batching = anyIdempotentHandler(this.getHandlers().values());
    await consumer.run({
      ...(this.options.run ?? {}),
      eachBatchAutoResolve: false,
      eachBatch: (payload) =>
        consumeFetchedBatch(payload, {
          targetOf: async (message, topic, partition) =>
            batching ? this.batchTargetOf(message, topic, partition) : undefined,
          handle: (one) => this.handleMessage(one),
          isPaused: (topic, partition) => isPaused(consumer, topic, partition),
          logger: this.logger,
        }),
    });
  }

  /** The handler a message goes to, when it is an `@IdempotentHandler` that batches. */
  private async batchTargetOf(
    message: KafkaMessage,
    topic: string,
    partition: number,
  ): Promise<IdempotentBatchTarget | undefined> {
    const parsed = this.parser!.parse({ ...message, topic, partition });
    const packet = await this.deserializer.deserialize(parsed, { channel: topic });
    return idempotentBatchTargetOf(this.getHandlerByPattern(packet.pattern));
  }

  override async handleEvent(
    pattern: string,
    packet: { pattern: string; data: unknown },
    context: KafkaContext,
  ): Promise<any> {
    if (!this.getHandlerByPattern(pattern)) {
      this.logger.debug(
        `No @EventPattern('${pattern}') here; skipping ${context.getTopic()}/${context.getPartition()}@${context.getMessage().offset}`,
      );
      return;
    }
    return super.handleEvent(pattern, packet, context);
  }
}

function isPaused(consumer: Consumer, topic: string, partition: number): boolean {
  return consumer
    .paused()
    .some((paused) => paused.topic === topic && paused.partitions.includes(partition));
}
