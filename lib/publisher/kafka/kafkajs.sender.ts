import type { LoggerService } from '@nestjs/common';
import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import type { Admin, LogEntry, Producer, RecordMetadata } from 'kafkajs';
import { asError } from '../../common/errors/describe-error';
import { DEFAULT_RETRY, DEFAULT_SEND_TIMEOUT } from './kafka-publisher.options';
import { kafkajsClientConfig } from './kafkajs-client.options';
import type { KafkaPublisherOptions } from './kafka-publisher.options';
import {
  partitionNotInMetadataError,
  throwIfSendAborted,
  unknownPartitionError,
} from './kafka.sender';
import type { KafkaSender, PartitionCountOptions, TopicBatch } from './kafka.sender';
import { ProducerSlot } from './producer.slot';
import { withSendDeadline } from './send.deadline';

/**
 * `KafkaSender` over kafkajs: one producer (`acks: -1`) and an admin client for topic metadata.
 * Every send has a deadline (`sendTimeout`). kafkajs caches a producer's metadata for
 * `metadataMaxAge` (5 minutes) and leaves out of a request a message for a partition that cache
 * does not have: a send that finds a partition unanswered rejects with
 * `OutboxPartitionNotInMetadata`, and the publisher replaces the producer (`PartitionCounts`).
 */
export class KafkajsSender implements KafkaSender {
  private readonly kafka: Kafka;
  private readonly compression: CompressionTypes;
  private readonly sendTimeout: number;
  private readonly slot: ProducerSlot<Promise<Producer>>;
  private admin?: Promise<Admin>;

  constructor(
    private readonly options: KafkaPublisherOptions,
    private readonly logger: LoggerService,
  ) {
    this.compression =
      options.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None;
    this.sendTimeout = options.sendTimeout ?? DEFAULT_SEND_TIMEOUT;
    this.kafka = new Kafka({
      ...kafkajsClientConfig(options),
      logLevel: logLevel.WARN,
      logCreator: () => (entry: LogEntry) => this.log(entry),
    });
    this.slot = new ProducerSlot(
      () => this.newProducer(),
      (producer) => this.closeClient(producer),
      this.sendTimeout,
    );
  }

  async connect(): Promise<void> {
    await this.slot.producer();
  }

  async partitionCount(topic: string, options?: PartitionCountOptions): Promise<number> {
    // A metadata request through the producer (allowAutoTopicCreation) lets the broker create it.
    if (options?.autoCreate) await this.learnTopic(topic);
    const admin = await this.ensureAdmin();
    const metadata = await withSendDeadline(
      admin.fetchTopicMetadata({ topics: [topic] }),
      this.sendTimeout,
    );
    const count = metadata.topics.find((entry) => entry.name === topic)?.partitions.length ?? 0;
    if (count === 0)
      throw unknownPartitionError(`topic "${topic}" has no partitions in the cluster metadata`);
    return count;
  }

  async send(batches: readonly TopicBatch[], signal?: AbortSignal): Promise<void> {
    throwIfSendAborted(signal);
    return withSendDeadline(
      this.slot.run(async (connecting) => {
        const producer = await connecting;
        // kafkajs' own retries of a request already sent (`retry`, about a second) cannot be stopped.
        throwIfSendAborted(signal);
        const stored = await producer.sendBatch({
          acks: -1,
          compression: this.compression,
          topicMessages: batches.map((batch) => ({ topic: batch.topic, messages: batch.messages })),
        });
        const missing = unanswered(batches, stored);
        if (missing) throw partitionNotInMetadataError(missing.topic, missing.partition);
      }),
      this.sendTimeout,
    );
  }

  async replaceProducer(): Promise<void> {
    this.slot.retire();
  }

  async disconnect(): Promise<void> {
    const admin = this.admin;
    this.admin = undefined;
    await this.slot.closeAll();
    await this.closeClient(admin);
  }

  /**
   * A send of no message: kafkajs reads the topic's metadata through the producer, whose
   * `allowAutoTopicCreation` lets the broker create it, and produces nothing.
   */
  private async learnTopic(topic: string): Promise<void> {
    await withSendDeadline(
      this.slot.run(async (connecting) => {
        const producer = await connecting;
        await producer.sendBatch({ acks: -1, topicMessages: [{ topic, messages: [] }] });
      }),
      this.sendTimeout,
    );
  }

  private ensureAdmin(): Promise<Admin> {
    this.admin ??= connected(this.kafka.admin(), () => (this.admin = undefined));
    return this.admin;
  }

  private newProducer(): Promise<Producer> {
    const idempotent = this.options.idempotent ?? false;
    const producer = this.kafka.producer({
      allowAutoTopicCreation: this.options.allowAutoTopicCreation ?? false,
      idempotent,
      maxInFlightRequests: idempotent ? 1 : undefined,
      retry: idempotent ? (this.options.retry ?? DEFAULT_RETRY) : undefined,
    });
    const connecting: Promise<Producer> = connected(producer, () => this.slot.forget(connecting));
    return connecting;
  }

  /** Disconnects a producer or the admin (once connected). Never rejects. */
  private async closeClient(client: Promise<Producer | Admin> | undefined): Promise<void> {
    try {
      await (await client?.catch(() => undefined))?.disconnect();
    } catch (error) {
      this.logger.warn(`Kafka client did not disconnect cleanly: ${asError(error).message}`);
    }
  }

  /**
   * kafkajs's own lines, all at debug: during an outage it logs every retry of every connection.
   * What the relay has to say about the broker, it says itself (see `BrokerOutageLog`).
   */
  private log(entry: LogEntry): void {
    const { message, error } = entry.log;
    this.logger.debug?.(
      `kafkajs ${entry.namespace}: ${message}${error ? ` (${String(error)})` : ''}`,
    );
  }
}

/** `client` once connected; a failed connect calls `forget`, so that the next use tries again. */
function connected<T extends { connect(): Promise<void> }>(
  client: T,
  forget: () => void,
): Promise<T> {
  return client.connect().then(
    () => client,
    (error: unknown) => {
      forget();
      throw error;
    },
  );
}

/**
 * kafkajs 2.2.4 leaves out of the produce request a message whose partition its metadata does
 * not know (the topic gained partitions since the producer read it, or was recreated with fewer),
 * and resolves as if it were stored. Every partition a message was sent to must be in the
 * broker's answer; the first that is not, if any (nothing was stored there).
 */
function unanswered(
  batches: readonly TopicBatch[],
  stored: RecordMetadata[],
): { topic: string; partition: number } | undefined {
  const answered = new Set(stored.map((entry) => `${entry.topicName}#${entry.partition}`));
  for (const { topic, messages } of batches) {
    // The publisher hands each partition's messages over together: one look-up per run of them.
    let checked: number | undefined;
    for (const { partition } of messages) {
      if (partition === undefined || partition === checked) continue;
      if (!answered.has(`${topic}#${partition}`)) return { topic, partition };
      checked = partition;
    }
  }
  return undefined;
}
