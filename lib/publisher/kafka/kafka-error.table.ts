/**
 * What a Kafka error concerns (`classifyKafkaError`), which decides what the relay holds back:
 * - `size`: the records themselves are refused (too large, malformed for the broker). A group
 *   is split to find the guilty message; that one alone can never be accepted: dead-lettered.
 * - `invalid-topic`: the name is illegal; never accepted: dead-lettered.
 * - `topic`: the topic refuses for now (unknown, not authorized, its settings refuse the records
 *   as the relay writes them). Held back and retried with backoff, no attempt counted.
 * - `partition`: one partition refuses for now (leader moving, not enough in-sync replicas,
 *   timed out, the producer's sequence out of step). Held back and retried with backoff.
 * - `configuration`: the relay's credentials, ACLs, client or options do not fit this broker;
 *   nothing can be published until someone changes them: every publish pauses, and the log and
 *   health say "configuration error: <error>", not "broker unavailable".
 * - `broker`: the broker or the way to it is unavailable (no answer): every publish pauses.
 * - `event`: the broker failed on these records for a reason that may pass; the attempt counts
 *   against the event (dead-lettered after `maxAttempts`).
 */
export type KafkaErrorScope =
  'size' | 'invalid-topic' | 'topic' | 'partition' | 'configuration' | 'broker' | 'event';

/** Errors that get one scope for one reason. */
export interface KafkaErrorGroup {
  scope: KafkaErrorScope;
  /** Why they get that scope, one line. */
  reason: string;
  /** Kafka protocol error names (`type`), or the client's error names (`name`). */
  errors: readonly string[];
}

/**
 * Every Kafka protocol error name kafkajs 2.2 (`src/protocol/error.js`, with some older names:
 * `NOT_LEADER_FOR_PARTITION`, `GROUP_LOAD_IN_PROGRESS`, `UNKNOWN`...) or `@platformatic/kafka`
 * (`dist/protocol/errors.js`, codes -1 to 127) knows, by the scope Kafka's meaning and
 * retriable flag give it (a spec checks the list is complete against both clients' lists).
 */
export const KAFKA_PROTOCOL_ERROR_GROUPS: readonly KafkaErrorGroup[] = [
  {
    scope: 'size',
    reason: 'the broker refuses the records themselves; one it refuses when sent alone never fits',
    errors: ['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD'],
  },
  {
    scope: 'invalid-topic',
    reason: 'the topic name is illegal',
    errors: ['INVALID_TOPIC_EXCEPTION'],
  },
  {
    scope: 'topic',
    reason:
      'the topic is unknown (not created yet, metadata lag, recreated) or refused to this producer until an operator acts',
    errors: [
      'UNKNOWN_TOPIC_OR_PARTITION',
      'UNKNOWN_TOPIC_ID',
      'INCONSISTENT_TOPIC_ID',
      'TOPIC_AUTHORIZATION_FAILED',
      'POLICY_VIOLATION',
      'INVALID_REPLICATION_FACTOR',
    ],
  },
  {
    scope: 'topic',
    reason:
      "the topic's settings refuse the records as the relay writes them: a timestamp (the relay host's clock) outside `message.timestamp.*.max.ms`, a message format without headers; not the event",
    errors: ['INVALID_TIMESTAMP', 'UNSUPPORTED_FOR_MESSAGE_FORMAT'],
  },
  {
    scope: 'partition',
    reason: "the partition's leader or replicas cannot take the records now (Kafka: retriable)",
    errors: [
      'LEADER_NOT_AVAILABLE',
      'NOT_LEADER_FOR_PARTITION',
      'NOT_LEADER_OR_FOLLOWER',
      'REPLICA_NOT_AVAILABLE',
      'NOT_ENOUGH_REPLICAS',
      'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
      'REQUEST_TIMED_OUT',
      'KAFKA_STORAGE_ERROR',
      'FENCED_LEADER_EPOCH',
      'UNKNOWN_LEADER_EPOCH',
      'OFFSET_NOT_AVAILABLE',
      'PREFERRED_LEADER_NOT_AVAILABLE',
      'ELIGIBLE_LEADERS_NOT_AVAILABLE',
      'LISTENER_NOT_FOUND',
    ],
  },
  {
    scope: 'partition',
    reason:
      "the idempotent producer's id, epoch or sequence for the partition is out of step with the broker: not the event",
    errors: [
      'OUT_OF_ORDER_SEQUENCE_NUMBER',
      'DUPLICATE_SEQUENCE_NUMBER',
      'UNKNOWN_PRODUCER_ID',
      'INVALID_PRODUCER_EPOCH',
      'PRODUCER_FENCED',
    ],
  },
  {
    scope: 'configuration',
    reason: "the relay's credentials or ACLs: nothing is published until they are fixed",
    errors: [
      'CLUSTER_AUTHORIZATION_FAILED',
      'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
      'SASL_AUTHENTICATION_FAILED',
      'UNSUPPORTED_SASL_MECHANISM',
      'ILLEGAL_SASL_STATE',
      'SECURITY_DISABLED',
      'DELEGATION_TOKEN_AUTH_DISABLED',
      'DELEGATION_TOKEN_NOT_FOUND',
      'DELEGATION_TOKEN_OWNER_MISMATCH',
      'DELEGATION_TOKEN_REQUEST_NOT_ALLOWED',
      'DELEGATION_TOKEN_AUTHORIZATION_FAILED',
      'DELEGATION_TOKEN_EXPIRED',
      'INVALID_PRINCIPAL_TYPE',
      'UNACCEPTABLE_CREDENTIAL',
      'PRINCIPAL_DESERIALIZATION_FAILURE',
    ],
  },
  {
    scope: 'configuration',
    reason:
      'the client and the broker disagree on the protocol, or the broker refuses an option (compression, acks): a client or configuration error',
    errors: [
      'UNSUPPORTED_VERSION',
      'UNSUPPORTED_COMPRESSION_TYPE',
      'INVALID_REQUIRED_ACKS',
      'INVALID_REQUEST',
      'INVALID_TRANSACTION_TIMEOUT',
    ],
  },
  {
    scope: 'broker',
    reason: 'the broker, or the way to it, is unavailable',
    errors: ['BROKER_NOT_AVAILABLE', 'NETWORK_EXCEPTION'],
  },
  {
    scope: 'event',
    reason:
      'the broker failed on these records without saying why, or they arrived corrupted (CRC; Kafka: retriable): retried, the attempt counts',
    errors: ['UNKNOWN', 'UNKNOWN_SERVER_ERROR', 'KAFKAJS_UNKNOWN_ERROR_CODE', 'CORRUPT_MESSAGE'],
  },
  {
    scope: 'configuration',
    reason:
      'answers to requests a producer never makes (consumer groups, fetch, admin, transactions, KRaft): one reaching the relay is a client error',
    errors: [
      'OFFSET_OUT_OF_RANGE',
      'INVALID_FETCH_SIZE',
      'STALE_CONTROLLER_EPOCH',
      'OFFSET_METADATA_TOO_LARGE',
      'GROUP_LOAD_IN_PROGRESS',
      'COORDINATOR_LOAD_IN_PROGRESS',
      'GROUP_COORDINATOR_NOT_AVAILABLE',
      'COORDINATOR_NOT_AVAILABLE',
      'NOT_COORDINATOR_FOR_GROUP',
      'NOT_COORDINATOR',
      'ILLEGAL_GENERATION',
      'INCONSISTENT_GROUP_PROTOCOL',
      'INVALID_GROUP_ID',
      'UNKNOWN_MEMBER_ID',
      'INVALID_SESSION_TIMEOUT',
      'REBALANCE_IN_PROGRESS',
      'INVALID_COMMIT_OFFSET_SIZE',
      'GROUP_AUTHORIZATION_FAILED',
      'TOPIC_ALREADY_EXISTS',
      'INVALID_PARTITIONS',
      'INVALID_REPLICA_ASSIGNMENT',
      'INVALID_CONFIG',
      'NOT_CONTROLLER',
      'INVALID_TXN_STATE',
      'INVALID_PRODUCER_ID_MAPPING',
      'CONCURRENT_TRANSACTIONS',
      'TRANSACTION_COORDINATOR_FENCED',
      'OPERATION_NOT_ATTEMPTED',
      'LOG_DIR_NOT_FOUND',
      'REASSIGNMENT_IN_PROGRESS',
      'NON_EMPTY_GROUP',
      'GROUP_ID_NOT_FOUND',
      'FETCH_SESSION_ID_NOT_FOUND',
      'INVALID_FETCH_SESSION_EPOCH',
      'TOPIC_DELETION_DISABLED',
      'STALE_BROKER_EPOCH',
      'MEMBER_ID_REQUIRED',
      'GROUP_MAX_SIZE_REACHED',
      'FENCED_INSTANCE_ID',
      'ELECTION_NOT_NEEDED',
      'NO_REASSIGNMENT_IN_PROGRESS',
      'GROUP_SUBSCRIBED_TO_TOPIC',
      'UNSTABLE_OFFSET_COMMIT',
      'THROTTLING_QUOTA_EXCEEDED',
      'RESOURCE_NOT_FOUND',
      'DUPLICATE_RESOURCE',
      'INCONSISTENT_VOTER_SET',
      'INVALID_UPDATE_VERSION',
      'FEATURE_UPDATE_FAILED',
      'SNAPSHOT_NOT_FOUND',
      'POSITION_OUT_OF_RANGE',
      'DUPLICATE_BROKER_REGISTRATION',
      'BROKER_ID_NOT_REGISTERED',
      'INCONSISTENT_CLUSTER_ID',
      'TRANSACTIONAL_ID_NOT_FOUND',
      'FETCH_SESSION_TOPIC_ID_ERROR',
      'INELIGIBLE_REPLICA',
      'NEW_LEADER_ELECTED',
      'OFFSET_MOVED_TO_TIERED_STORAGE',
      'FENCED_MEMBER_EPOCH',
      'UNRELEASED_INSTANCE_ID',
      'UNSUPPORTED_ASSIGNOR',
      'STALE_MEMBER_EPOCH',
      'MISMATCHED_ENDPOINT_TYPE',
      'UNSUPPORTED_ENDPOINT_TYPE',
      'UNKNOWN_CONTROLLER_ID',
      'UNKNOWN_SUBSCRIPTION_ID',
      'TELEMETRY_TOO_LARGE',
      'INVALID_REGISTRATION',
      'TRANSACTION_ABORTABLE',
      'INVALID_RECORD_STATE',
      'SHARE_SESSION_NOT_FOUND',
      'INVALID_SHARE_SESSION_EPOCH',
      'FENCED_STATE_EPOCH',
      'INVALID_VOTER_KEY',
      'DUPLICATE_VOTER',
      'VOTER_NOT_FOUND',
    ],
  },
];

/**
 * Errors without a protocol type, by `name`: kafkajs' own (`@platformatic/kafka`'s are given
 * these names by `asKafkajsError`) and the publisher's. Wrappers are not here: a
 * `KafkaJSNumberOfRetriesExceeded` is read as its last attempt, an aggregate as its parts.
 */
export const KAFKA_CLIENT_ERROR_GROUPS: readonly KafkaErrorGroup[] = [
  {
    scope: 'partition',
    reason:
      "a partition the producer's metadata lacks yet (the topic gained partitions): only that partition waits",
    errors: ['OutboxPartitionNotInMetadata'],
  },
  {
    scope: 'configuration',
    reason:
      'the client cannot work with this broker as configured: authentication refused, an API or codec it lacks, a call it refuses before sending (kafkajs refusing a send while its producer disconnects: `broker`)',
    errors: [
      'KafkaJSSASLAuthenticationError',
      'KafkaJSServerDoesNotSupportApiKey',
      'KafkaJSNotImplemented',
      'KafkaJSInvariantViolation',
      'KafkaJSNonRetriableError',
    ],
  },
  {
    scope: 'broker',
    reason:
      'no answer from the broker: connection refused or closed, request timed out, no broker or metadata, a send over its deadline (outcome unknown)',
    errors: [
      'KafkaJSConnectionError',
      'KafkaJSConnectionClosedError',
      'KafkaJSRequestTimeoutError',
      'KafkaJSBrokerNotFound',
      'KafkaJSNoBrokerAvailableError',
      'KafkaJSMetadataNotLoaded',
      'KafkaJSTopicMetadataNotLoaded',
      'KafkaJSLockTimeout',
      'KafkaJSTimeout',
      'KafkaJSError',
      'OutboxKafkaSendTimeout',
    ],
  },
];

/** What happens to the events a failure of each scope concerns. */
export const KAFKA_SCOPE_CONSEQUENCES: Readonly<Record<KafkaErrorScope, string>> = {
  size: 'the group is split and each message sent alone; one refused alone is dead-lettered at once',
  'invalid-topic': 'dead-lettered at once',
  topic:
    'waits with every event bound to the topic; no attempt counted; the topic is retried with backoff',
  partition:
    'waits with every event bound to the partition (the topic when no partition is known); no attempt counted; retried with backoff',
  configuration:
    'all publishing pauses, retried with backoff; no attempt counted; the log and health say "configuration error: <error>"',
  broker: 'all publishing pauses, retried with backoff; no attempt counted; logged as an outage',
  event: 'the attempt counts; retried with backoff, dead-lettered after `maxAttempts`',
};

function byName(groups: readonly KafkaErrorGroup[]): ReadonlyMap<string, KafkaErrorScope> {
  const map = new Map<string, KafkaErrorScope>();
  for (const group of groups) for (const name of group.errors) map.set(name, group.scope);
  return map;
}

const PROTOCOL = byName(KAFKA_PROTOCOL_ERROR_GROUPS);
const CLIENT = byName(KAFKA_CLIENT_ERROR_GROUPS);

/** The scope of a Kafka protocol error type; a type neither client knows concerns the event. */
export function scopeOfKafkaType(type: string): KafkaErrorScope {
  return PROTOCOL.get(type) ?? 'event';
}

/** The scope of an error without a protocol type, by name; undefined when not listed. */
export function scopeOfClientError(name: string): KafkaErrorScope | undefined {
  return CLIENT.get(name);
}
