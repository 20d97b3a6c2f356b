import type { KafkaConfig, RetryOptions } from 'kafkajs';
import type { CloudEventSource } from '../kafka-message.mapper';
import type { KafkaClientName } from './kafka.sender';
import type { TopicRouter } from '../topic-name';

export const DEFAULT_CLIENT_ID = 'nestjs-outbox-relay';
/** `retry`'s default, for both clients: a send gives up after about a second. */
export const DEFAULT_RETRY = { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 };
export const DEFAULT_SEND_TIMEOUT = 60_000;

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
  /** ms: the relay's deadline for one send, the client's retries included. Default 60000. */
  sendTimeout?: number;
  /**
   * kafkajs' own retries of one send (metadata refresh, leader changes...). Default
   * `{ retries: 2, initialRetryTime: 100, maxRetryTime: 1000 }`: a send gives up after about a
   * second and the relay retries with its own backoff, holding back only what failed.
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
  /**
   * The Kafka client that produces: `kafkajs` (default) or `platformatic` (`@platformatic/kafka`,
   * an optional peer dependency: install it; Node.js >= 20.19.4, 22.22 for its 2.x).
   */
  client?: KafkaClientName;
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
