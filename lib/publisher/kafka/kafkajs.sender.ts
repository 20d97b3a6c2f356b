import type { LoggerService } from '@nestjs/common';
import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import type { Admin, LogEntry, Producer, RecordMetadata } from 'kafkajs';
import { asError } from '../../common/errors/describe-error';
import { DEFAULT_CLIENT_ID, DEFAULT_RETRY } from './kafka-publisher.options';
import type { KafkaPublisherOptions } from './kafka-publisher.options';
import { throwIfSendAborted, unknownPartitionError } from './kafka.sender';
import type { KafkaSender, TopicBatch } from './kafka.sender';

/** `KafkaSender` over kafkajs: one producer (`acks: -1`) and an admin client for topic metadata. */
export class KafkajsSender implements KafkaSender {
  private readonly kafka: Kafka;
  private readonly compression: CompressionTypes;
  private producer?: Promise<Producer>;
  private admin?: Promise<Admin>;

  constructor(
    private readonly options: KafkaPublisherOptions,
    private readonly logger: LoggerService,
  ) {
    this.compression =
      options.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None;
    this.kafka = new Kafka({
      clientId: options.clientId ?? DEFAULT_CLIENT_ID,
      brokers: options.brokers,
      ssl: options.ssl,
      sasl: options.sasl,
      connectionTimeout: options.connectionTimeout,
      requestTimeout: options.requestTimeout,
      retry: options.retry ?? DEFAULT_RETRY,
      logLevel: logLevel.WARN,
      logCreator: () => (entry: LogEntry) => this.log(entry),
    });
  }

  async connect(): Promise<void> {
    await this.ensureProducer();
  }

  async partitionCount(topic: string): Promise<number> {
    const admin = await this.ensureAdmin();
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    const count = metadata.topics.find((entry) => entry.name === topic)?.partitions.length ?? 0;
    if (count === 0)
      throw unknownPartitionError(`topic "${topic}" has no partitions in the cluster metadata`);
    return count;
  }

  async send(batches: readonly TopicBatch[], signal?: AbortSignal): Promise<void> {
    throwIfSendAborted(signal);
    const producer = await this.ensureProducer();
    // kafkajs' own retries of a request already sent (`retry`, about a second) cannot be stopped.
    throwIfSendAborted(signal);
    const stored = await producer.sendBatch({
      acks: -1,
      compression: this.compression,
      topicMessages: batches.map((batch) => ({ topic: batch.topic, messages: batch.messages })),
    });
    throwIfUnanswered(batches, stored);
  }

  async replaceProducer(): Promise<void> {}

  async disconnect(): Promise<void> {
    const producer = await this.producer?.catch(() => undefined);
    const admin = await this.admin?.catch(() => undefined);
    this.producer = undefined;
    this.admin = undefined;
    for (const client of [producer, admin]) {
      try {
        await client?.disconnect();
      } catch (error) {
        this.logger.warn(`Kafka client did not disconnect cleanly: ${asError(error).message}`);
      }
    }
  }

  private ensureAdmin(): Promise<Admin> {
    this.admin ??= connected(this.kafka.admin(), () => (this.admin = undefined));
    return this.admin;
  }

  private ensureProducer(): Promise<Producer> {
    if (!this.producer) {
      const idempotent = this.options.idempotent ?? false;
      const producer = this.kafka.producer({
        allowAutoTopicCreation: this.options.allowAutoTopicCreation ?? false,
        idempotent,
        maxInFlightRequests: idempotent ? 1 : undefined,
        retry: idempotent ? (this.options.retry ?? DEFAULT_RETRY) : undefined,
      });
      this.producer = connected(producer, () => (this.producer = undefined));
    }
    return this.producer;
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
 * not know (a topic recreated with fewer partitions than the publisher last read), and resolves
 * as if it were stored. Every partition a message was sent to must be in the broker's answer;
 * one that is not is refused like an unknown partition, so the publisher reads the topic's
 * partitions again and the event stays pending.
 */
function throwIfUnanswered(batches: readonly TopicBatch[], stored: RecordMetadata[]): void {
  const answered = new Set(stored.map((entry) => `${entry.topicName}#${entry.partition}`));
  for (const { topic, messages } of batches) {
    // The publisher hands each partition's messages over together: one look-up per run of them.
    let checked: number | undefined;
    for (const { partition } of messages) {
      if (partition === undefined || partition === checked) continue;
      if (answered.has(`${topic}#${partition}`)) {
        checked = partition;
        continue;
      }
      throw unknownPartitionError(
        `partition ${partition} of topic "${topic}" is not in the cluster metadata: nothing was stored there`,
      );
    }
  }
}
