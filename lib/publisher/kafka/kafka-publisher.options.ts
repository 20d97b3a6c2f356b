import type { KafkaConfig, RetryOptions } from 'kafkajs';
import type { CloudEventSource } from '../kafka-message.mapper';
import type { KafkaClientName } from './kafka.sender';
import type { TopicRouter } from '../topic-name';

export const DEFAULT_CLIENT_ID = 'nestjs-outbox-relay';
/** `retry`'s default, for both clients: a send gives up after about a second. */
export const DEFAULT_RETRY = { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 };
/**
 * `sendTimeout`'s default, ms. A send's own retry loop with the default options lasts at most
 * about 95 s with kafkajs (3 attempts of up to `requestTimeout` 30 s plus `connectionTimeout`
 * 1 s, and its backoff), and as long with platformatic, which is given the same timeouts: a
 * deadline of 120 s never cuts a send the client would still settle, yet a client that hangs
 * (platformatic's idempotent producer retries forever) stalls the relay for 2 minutes, not for ever.
 */
export const DEFAULT_SEND_TIMEOUT = 120_000;

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
  /**
   * ms a send may take, the client's own retries included, before the relay stops waiting for it
   * (`KafkaSendTimeoutError`: outcome unknown, held like a broker outage and sent again later).
   * Default `DEFAULT_SEND_TIMEOUT` (120 s); keep it longer than the client's retry loop.
   */
  sendTimeout?: number;
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
