import * as kafkajs from 'kafkajs';
import {
  KafkaJSConnectionError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
} from 'kafkajs';
import { partitionNotInMetadataError } from '../../../lib/publisher/kafka/kafka.sender';

/** Exported by kafkajs at runtime, missing from its typings. */
const KafkaJSConnectionClosedError = (
  kafkajs as unknown as {
    KafkaJSConnectionClosedError: new (
      message: string,
      meta: { host: string; port: number },
    ) => Error;
  }
).KafkaJSConnectionClosedError;

/** Kafka protocol errors the simulated broker returns: code, and whether kafkajs retries them. */
export const KAFKA_PROTOCOL = {
  UNKNOWN_TOPIC_OR_PARTITION: { code: 3, retriable: true },
  LEADER_NOT_AVAILABLE: { code: 5, retriable: true },
  NOT_LEADER_FOR_PARTITION: { code: 6, retriable: true },
  REQUEST_TIMED_OUT: { code: 7, retriable: true },
  MESSAGE_TOO_LARGE: { code: 10, retriable: false },
  RECORD_LIST_TOO_LARGE: { code: 18, retriable: false },
  NOT_ENOUGH_REPLICAS: { code: 19, retriable: true },
  TOPIC_AUTHORIZATION_FAILED: { code: 29, retriable: false },
  /** An idempotent producer's batch whose first sequence is not the next the broker expects. */
  OUT_OF_ORDER_SEQUENCE_NUMBER: { code: 45, retriable: false },
  UNKNOWN_SERVER_ERROR: { code: -1, retriable: false },
} as const;

export type KafkaProtocolType = keyof typeof KAFKA_PROTOCOL;

/** The error kafkajs raises for a protocol error in a produce response. */
export function protocolError(type: KafkaProtocolType, detail: string): KafkaJSProtocolError {
  const { code, retriable } = KAFKA_PROTOCOL[type];
  const raw = Object.assign(new Error(`${type}: ${detail}`), { type, code, retriable });
  return new KafkaJSProtocolError(raw);
}

/**
 * What `KafkajsSender` raises when kafkajs left a partition out of the request because its
 * producer's metadata does not have it yet (`throwIfUnanswered`, lib/publisher/kafka/kafkajs.sender.ts):
 * the one place the simulation makes this error, so a partition-scoped one replaces it at once.
 */
export function partitionNotInMetadata(topic: string, partition: number): Error {
  return partitionNotInMetadataError(topic, partition);
}

/** What a failed connection (broker down, or it closed the socket) looks like. */
export function connectionError(closed: boolean): Error {
  return closed
    ? new KafkaJSConnectionClosedError('Closed connection', { host: 'sim-broker', port: 9092 })
    : new KafkaJSConnectionError('Connection error: connect ECONNREFUSED', {
        broker: 'sim-broker:9092',
        code: 'ECONNREFUSED',
      });
}

/** kafkajs wraps a retriable error in `KafkaJSNumberOfRetriesExceeded` once its retries ran out. */
export function afterRetries(error: Error, retries: number): Error {
  return new KafkaJSNumberOfRetriesExceeded(error, { retryCount: retries, retryTime: 0 });
}

/** The protocol type of a simulated error, for the history ("CONNECTION" for the others). */
export function errorType(error: unknown): string {
  let current = error as { type?: unknown; cause?: unknown; name?: unknown } | undefined;
  for (let depth = 0; current && depth < 4; depth++) {
    if (typeof current.type === 'string') return current.type;
    current = current.cause as typeof current;
  }
  return 'CONNECTION';
}
