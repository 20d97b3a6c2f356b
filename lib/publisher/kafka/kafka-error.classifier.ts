import { scopeOfClientError, scopeOfKafkaType } from './kafka-error.table';
import type { KafkaErrorScope } from './kafka-error.table';

export type { KafkaErrorScope } from './kafka-error.table';

export interface KafkaErrorClass {
  scope: KafkaErrorScope;
  /** The Kafka protocol error type that decided, e.g. `NOT_ENOUGH_REPLICAS`. */
  type?: string;
}

/**
 * Among the parts of one answer (per partition, per broker), the first scope of this list
 * found wins: a part naming a topic or a partition is settled on it (the publisher then sends
 * each (topic, partition) group alone, so each part gets its own answer); of the rest, what
 * stops all publishing comes before what is charged to the event, so an event is never counted
 * an attempt for a request another part of which could not even be delivered.
 */
const PART_PRECEDENCE: readonly KafkaErrorScope[] = [
  'size',
  'invalid-topic',
  'topic',
  'partition',
  'configuration',
  'broker',
  'event',
];

/** Errors that stand for the error they wrap (`cause`, kafkajs' `originalError`). */
const WRAPPERS = new Set(['KafkaJSNumberOfRetriesExceeded', 'KafkaJSNonRetriableError']);

/**
 * kafkajs refuses a send while its producer disconnects with a bare `KafkaJSNonRetriableError`
 * (src/producer/messageProducer.js), the class it also refuses bad arguments with: nothing was
 * sent and the client is stopping, as `@platformatic/kafka`'s "Client is closed." (`broker`).
 */
const DISCONNECTING = /^The producer is disconnecting/;

const MAX_DEPTH = 8;

type Node = Record<string, unknown>;

/**
 * The scope of the final broker answer in a kafkajs-shaped error (`KafkaSender`'s errors; for
 * `@platformatic/kafka` after `asKafkajsError`), identical for both clients. The error is read
 * as a chain of two kinds of links:
 * - attempts: a send the client retried is read as its last attempt only. kafkajs keeps only
 *   that one (`KafkaJSNumberOfRetriesExceeded`, `cause`); `asKafkajsError` gives
 *   `@platformatic/kafka`'s retry aggregate (every attempt) the same shape. What an earlier
 *   attempt was answered says nothing about where the records are now.
 * - parts: the errors of one answer (per partition, or per broker: `errors` of an aggregate)
 *   happened together; their scopes combine by `PART_PRECEDENCE`.
 * An error is then classified by its client error `name` (`KAFKA_CLIENT_ERROR_GROUPS`), else its
 * protocol `type` (`KAFKA_PROTOCOL_ERROR_GROUPS`); one with neither is taken as a failure to
 * reach the broker (`broker`), like kafkajs' connection errors.
 */
export function classifyKafkaError(error: unknown): KafkaErrorClass {
  return classify(error, 0);
}

function classify(value: unknown, depth: number): KafkaErrorClass {
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return { scope: 'broker' };
  const node = value as Node;
  const name = typeof node.name === 'string' ? node.name : undefined;
  const type = typeof node.type === 'string' ? node.type : undefined;
  const inner = node.originalError ?? node.cause;
  if (name !== undefined && WRAPPERS.has(name) && isObject(inner)) {
    return classify(inner, depth + 1);
  }
  if (typeof node.message === 'string' && DISCONNECTING.test(node.message))
    return { scope: 'broker' };
  const named = name === undefined ? undefined : scopeOfClientError(name);
  if (named) return type ? { scope: named, type } : { scope: named };
  if (type) return { scope: scopeOfKafkaType(type), type };
  if (Array.isArray(node.errors) && node.errors.length > 0) {
    return combineParts(node.errors.map((part: unknown) => classify(part, depth + 1)));
  }
  if (isObject(inner)) return classify(inner, depth + 1);
  return { scope: 'broker' };
}

function combineParts(parts: readonly KafkaErrorClass[]): KafkaErrorClass {
  let best = parts[0];
  for (const part of parts) {
    if (PART_PRECEDENCE.indexOf(part.scope) < PART_PRECEDENCE.indexOf(best.scope)) best = part;
  }
  return best;
}

function isObject(value: unknown): value is object {
  return value !== null && typeof value === 'object';
}
