import { Logger } from '@nestjs/common';
import { asError } from '../common/errors/describe-error';
import { CompressionTypes, Kafka, logLevel, Partitioners } from 'kafkajs';
import type { KafkaConfig, LogEntry, Producer, RetryOptions } from 'kafkajs';
import type { OutboxEventRecord } from '../common/envelope';
import { PublishRejectedError } from './errors/publish-rejected.error';
import { classifyKafkaError, SIZE_ERROR_TYPES } from './kafka-error.classifier';
import { toKafkaMessage } from './kafka-message.mapper';
import type { CloudEventSource, OutboxKafkaMessage } from './kafka-message.mapper';
import type { OutboxPublisher, PublishOutcome } from './outbox-publisher.interface';
import { createTopicRouter } from './topic-name';
import type { TopicRouter } from './topic-name';

/** Connection settings of the default publisher (a subset of kafkajs' `KafkaConfig`). */
export interface KafkaConnectionOptions {
  /** `host:port` of at least one broker. Use `127.0.0.1` rather than `localhost`. */
  brokers: string[];
  /** Default `nestjs-outbox-relay`. */
  clientId?: string;
  ssl?: KafkaConfig['ssl'];
  sasl?: KafkaConfig['sasl'];
  /** ms, kafkajs default 1000. */
  connectionTimeout?: number;
  /** ms, kafkajs default 30000. */
  requestTimeout?: number;
  /**
   * kafkajs' own retries of one send (metadata refresh, leader changes...). Default
   * `{ retries: 5, initialRetryTime: 300, maxRetryTime: 5000 }`: a send gives up after about
   * 10 s and the relay retries it later with its own backoff.
   */
  retry?: RetryOptions;
  /**
   * kafkajs' idempotent producer (broker-side dedupe of producer retries; forces one request in
   * flight). Default false: the relay already keeps per-aggregate order itself, and kafkajs marks
   * this mode experimental.
   */
  idempotent?: boolean;
  /** Default `none`. */
  compression?: 'none' | 'gzip';
}

export interface KafkaPublisherOptions extends KafkaConnectionOptions {
  /** Topic of an event. Default `${topicPrefix}${aggregateType}`. */
  topic?: TopicRouter;
  /** Prefix of the default topic name. Default ''. */
  topicPrefix?: string;
  /** `ce_source` header. Default the event's aggregateType. */
  source?: CloudEventSource;
  /** Let the broker create unknown topics (if it allows it). Default false. */
  allowAutoTopicCreation?: boolean;
}

/** kafkajs error types that concern one topic, not the broker as a whole. */
const TOPIC_LEVEL_RETRIABLE = new Set(['TOPIC_AUTHORIZATION_FAILED', 'POLICY_VIOLATION']);

interface Prepared {
  index: number;
  topic: string;
  aggregate: string;
  message: OutboxKafkaMessage;
}

/**
 * The default publisher: kafkajs, `acks: -1` (all in-sync replicas), key = aggregateId,
 * CloudEvents headers, JSON value, one `sendBatch` per call. Errors the broker will repeat
 * forever (too large, unknown/invalid topic) are `fatal`; when such an error hits a batch, the
 * batch is split (per topic, then per message) so only the guilty events are rejected.
 */
export class KafkaPublisher implements OutboxPublisher {
  private readonly logger = new Logger(KafkaPublisher.name);
  private readonly kafka: Kafka;
  private readonly route: TopicRouter;
  private readonly compression: CompressionTypes;
  private producer?: Producer;
  private connecting?: Promise<Producer>;

  constructor(private readonly options: KafkaPublisherOptions) {
    this.route = createTopicRouter({ route: options.topic, prefix: options.topicPrefix });
    this.compression =
      options.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None;
    this.kafka = new Kafka({
      clientId: options.clientId ?? 'nestjs-outbox-relay',
      brokers: options.brokers,
      ssl: options.ssl,
      sasl: options.sasl,
      connectionTimeout: options.connectionTimeout,
      requestTimeout: options.requestTimeout,
      retry: options.retry ?? { retries: 5, initialRetryTime: 300, maxRetryTime: 5000 },
      logLevel: logLevel.WARN,
      logCreator: () => (entry: LogEntry) => this.log(entry),
    });
  }

  async connect(): Promise<void> {
    await this.ensureProducer();
  }

  async publish(events: readonly OutboxEventRecord[]): Promise<PublishOutcome[]> {
    const outcomes: PublishOutcome[] = new Array<PublishOutcome>(events.length);
    const prepared: Prepared[] = [];
    events.forEach((event, index) => {
      try {
        const topic = this.route(event);
        prepared.push({
          index,
          topic,
          aggregate: `${event.aggregateType}\u0000${event.aggregateId}`,
          message: toKafkaMessage(event, this.options.source),
        });
      } catch (error) {
        outcomes[index] = { status: 'fatal', error: asError(error) };
      }
    });
    if (prepared.length > 0) {
      let producer: Producer;
      try {
        producer = await this.ensureProducer();
      } catch (error) {
        for (const item of prepared) {
          outcomes[item.index] = { status: 'retriable', error: asError(error), outage: true };
        }
        return outcomes;
      }
      await this.sendIsolating(producer, prepared, outcomes);
    }
    return outcomes;
  }

  async disconnect(): Promise<void> {
    const producer = this.producer ?? (await this.connecting?.catch(() => undefined));
    this.producer = undefined;
    this.connecting = undefined;
    if (!producer) return;
    try {
      await producer.disconnect();
    } catch (error) {
      this.logger.warn(`Kafka producer did not disconnect cleanly: ${asError(error).message}`);
    }
  }

  private ensureProducer(): Promise<Producer> {
    if (this.producer) return Promise.resolve(this.producer);
    if (!this.connecting) {
      const producer = this.kafka.producer({
        allowAutoTopicCreation: this.options.allowAutoTopicCreation ?? false,
        idempotent: this.options.idempotent ?? false,
        maxInFlightRequests: this.options.idempotent ? 1 : undefined,
        createPartitioner: Partitioners.DefaultPartitioner,
        retry: this.options.idempotent
          ? (this.options.retry ?? { retries: 5, initialRetryTime: 300, maxRetryTime: 5000 })
          : undefined,
      });
      this.connecting = producer.connect().then(
        () => {
          this.producer = producer;
          return producer;
        },
        (error: unknown) => {
          this.connecting = undefined;
          throw error;
        },
      );
    }
    return this.connecting;
  }

  private async send(producer: Producer, items: Prepared[]): Promise<void> {
    const byTopic = new Map<string, OutboxKafkaMessage[]>();
    for (const item of items) {
      const list = byTopic.get(item.topic);
      if (list) list.push(item.message);
      else byTopic.set(item.topic, [item.message]);
    }
    await producer.sendBatch({
      acks: -1,
      compression: this.compression,
      topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
    });
  }

  private async sendIsolating(
    producer: Producer,
    items: Prepared[],
    outcomes: PublishOutcome[],
  ): Promise<void> {
    try {
      await this.send(producer, items);
      for (const item of items) outcomes[item.index] = { status: 'ok' };
      return;
    } catch (error) {
      const cls = classifyKafkaError(error);
      if (!cls.fatal) {
        const outage = cls.type === undefined || !TOPIC_LEVEL_RETRIABLE.has(cls.type);
        for (const item of items) {
          outcomes[item.index] = {
            status: 'retriable',
            error: rejected(error, cls.type, item.topic, false),
            outage,
          };
        }
        return;
      }
      if (items.length === 1) {
        outcomes[items[0].index] = {
          status: 'fatal',
          error: rejected(error, cls.type, items[0].topic, true),
        };
        return;
      }
      const topics = [...new Set(items.map((item) => item.topic))];
      if (topics.length > 1) {
        for (const topic of topics) {
          await this.sendIsolating(
            producer,
            items.filter((item) => item.topic === topic),
            outcomes,
          );
        }
        return;
      }
      if (cls.type === undefined || !SIZE_ERROR_TYPES.has(cls.type)) {
        // A topic-level error (unknown or invalid topic): every message of it is refused.
        for (const item of items) {
          outcomes[item.index] = {
            status: 'fatal',
            error: rejected(error, cls.type, item.topic, true),
          };
        }
        return;
      }
      await this.sendOneByOne(producer, items, outcomes);
    }
  }

  /** Size errors: find the guilty messages; keep per-aggregate order (hold back after a failure). */
  private async sendOneByOne(
    producer: Producer,
    items: Prepared[],
    outcomes: PublishOutcome[],
  ): Promise<void> {
    const held = new Map<string, Error>();
    for (const item of items) {
      const blocking = held.get(item.aggregate);
      if (blocking) {
        outcomes[item.index] = { status: 'retriable', error: blocking };
        continue;
      }
      try {
        await this.send(producer, [item]);
        outcomes[item.index] = { status: 'ok' };
      } catch (error) {
        const cls = classifyKafkaError(error);
        if (cls.fatal) {
          outcomes[item.index] = {
            status: 'fatal',
            error: rejected(error, cls.type, item.topic, true),
          };
        } else {
          const failure = rejected(error, cls.type, item.topic, false);
          outcomes[item.index] = { status: 'retriable', error: failure };
          held.set(item.aggregate, failure);
        }
      }
    }
  }

  private log(entry: LogEntry): void {
    const message = entry.log.message;
    if (message.includes('Limiting retries for the idempotent producer')) return;
    const text = `kafkajs ${entry.namespace}: ${message}${entry.log.error ? ` (${String(entry.log.error)})` : ''}`;
    if (entry.level === logLevel.ERROR || entry.level === logLevel.WARN) this.logger.warn(text);
    else this.logger.debug(text);
  }
}

function rejected(error: unknown, type: string | undefined, topic: string, fatal: boolean): Error {
  const cause = asError(error);
  const result = new PublishRejectedError(
    `Kafka ${fatal ? 'rejected' : 'did not accept'} the event for topic "${topic}"` +
      `${type ? ` (${type})` : ''}: ${cause.message}`,
    fatal,
    { topic, kafkaError: type },
  );
  (result as Error & { cause?: unknown }).cause = cause;
  return result;
}
