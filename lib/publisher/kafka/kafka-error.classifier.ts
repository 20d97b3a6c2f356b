/**
 * What a Kafka error concerns, from kafkajs' errors (`type` of protocol errors, `name` of
 * client errors, unwrapped through `originalError`, `cause` and aggregate `errors`):
 * - `size`: the request, or one message of it, is too large or malformed for the broker. A
 *   group is split to find the guilty message; that one alone can never be accepted.
 * - `invalid-topic`: the name is illegal; never accepted.
 * - `topic`: the topic refuses for now (unknown: not created yet or metadata lag; not authorized;
 *   policy). Held back and retried with backoff, never discarded.
 * - `partition`: one partition refuses for now (not enough in-sync replicas, leader moving,
 *   storage error, timed out). Held back and retried with backoff.
 * - `broker`: the broker or the way to it is unavailable (connection errors, no metadata, no
 *   broker): every publish pauses.
 * - `event`: anything else; the attempt counts against the event.
 */
export type KafkaErrorScope = 'size' | 'invalid-topic' | 'topic' | 'partition' | 'broker' | 'event';

export interface KafkaErrorClass {
  scope: KafkaErrorScope;
  /** The first Kafka protocol error type found, e.g. `NOT_ENOUGH_REPLICAS`. */
  type?: string;
}

const SIZE_TYPES = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_RECORD',
  'CORRUPT_MESSAGE',
]);
const TOPIC_TYPES = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'TOPIC_AUTHORIZATION_FAILED',
  'POLICY_VIOLATION',
  'INVALID_REPLICATION_FACTOR',
]);
const PARTITION_TYPES = new Set([
  'NOT_ENOUGH_REPLICAS',
  'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
  'NOT_LEADER_OR_FOLLOWER',
  'REQUEST_TIMED_OUT',
  'KAFKA_STORAGE_ERROR',
  'FENCED_LEADER_EPOCH',
  'UNKNOWN_LEADER_EPOCH',
  'OFFSET_NOT_AVAILABLE',
]);
const BROKER_TYPES = new Set([
  'CLUSTER_AUTHORIZATION_FAILED',
  'BROKER_NOT_AVAILABLE',
  'NETWORK_EXCEPTION',
]);
const BROKER_NAMES = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSBrokerNotFound',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSLockTimeout',
  'KafkaJSRequestTimeoutError',
  'KafkaJSSASLAuthenticationError',
]);

/** Protocol types and error names in kafkajs' wrappers, outermost first. */
export function kafkaErrorChain(error: unknown): { types: string[]; names: string[] } {
  const types: string[] = [];
  const names: string[] = [];
  const seen = new Set<unknown>();
  const visit = (value: unknown, depth: number): void => {
    if (value === null || typeof value !== 'object' || seen.has(value) || depth > 8) return;
    seen.add(value);
    const candidate = value as Record<string, unknown>;
    if (typeof candidate.type === 'string') types.push(candidate.type);
    if (typeof candidate.name === 'string') names.push(candidate.name);
    visit(candidate.originalError, depth + 1);
    visit(candidate.cause, depth + 1);
    if (Array.isArray(candidate.errors)) {
      for (const inner of candidate.errors) visit(inner, depth + 1);
    }
  };
  visit(error, 0);
  return { types, names };
}

/** The scopes of protocol types, the first that matches any type of the chain winning. */
const SCOPES: ReadonlyArray<[KafkaErrorScope, ReadonlySet<string>]> = [
  ['size', SIZE_TYPES],
  ['invalid-topic', new Set(['INVALID_TOPIC_EXCEPTION'])],
  ['topic', TOPIC_TYPES],
  ['partition', PARTITION_TYPES],
  ['broker', BROKER_TYPES],
];

export function classifyKafkaError(error: unknown): KafkaErrorClass {
  const { types, names } = kafkaErrorChain(error);
  for (const [scope, set] of SCOPES) {
    const type = types.find((candidate) => set.has(candidate));
    if (type) return { scope, type };
  }
  if (types.length === 0 || names.some((name) => BROKER_NAMES.has(name))) {
    return { scope: 'broker', type: types[0] };
  }
  return { scope: 'event', type: types[0] };
}
