import type { mongo } from 'mongoose';
import type { PublishErrorEntry } from './outbox-event.document';

/** Why the input of a message could not be decoded (a `reason` of a consumer dead letter). */
export type BadPayloadReason = 'empty-value' | 'invalid-json' | 'forbidden-key' | 'invalid-payload';

/**
 * Why a message was dead-lettered: its input (`empty-value`, `invalid-json`, `forbidden-key`,
 * `invalid-payload`, `missing-event-id`, `invalid-event-id`, and with the `tenants` option
 * `missing-tenant`: no usable `ce_tenant` header), `max-failures` (the handler, or a
 * guard/pipe/interceptor in front of it, failed `maxFailures` times), or `unrecoverable` (an
 * `UnrecoverableEventError`).
 */
export type DeadLetterReason =
  | BadPayloadReason
  | 'missing-event-id'
  | 'invalid-event-id'
  | 'missing-tenant'
  | 'max-failures'
  | 'unrecoverable';

/** The copy of a message a dead letter keeps: bounded, whatever the message's size. */
export interface DeadLetterCopy {
  key: string | null;
  headers: Array<{ key: string; value: string }>;
  /** The value as UTF-8 text, or base64 when its bytes are not UTF-8; possibly truncated. */
  value: string | null;
  valueEncoding: 'utf8' | 'base64';
  /** Size of the whole value, in bytes. */
  valueBytes: number;
  /** SHA-256 (hex) of the whole value; null without a value. */
  valueSha256: string | null;
  /** True when `value` holds only the first `deadLetterMaxValueBytes` bytes. */
  valueTruncated: boolean;
  /**
   * False when the transport did not keep the bytes received (Nest's `Transport.KAFKA` parsed a
   * JSON value): the copy, size and hash are then of the value serialized again.
   */
  valueExact: boolean;
}

export const CONSUMER_DEAD_LETTERS_COLLECTION = 'outbox_consumer_dead_letters'; // the option's default

/**
 * One document of `collections.consumerDeadLetters` per `(consumer, eventId)` that failed (or
 * per message without a usable event id). It has the shape of the relay's dead letters
 * (`eventId`, `reason`, `attempts`, `lastError`, `errors: [{ at, attempt, error }]`,
 * `deadLetteredAt`) plus what is needed to apply the message later: the consumer, where it was
 * (`topic`, `partition`, `offset`), its key, headers and value (or a truncated copy of the value,
 * with its size and SHA-256), and what happened to the copy sent to a dead-letter topic.
 *
 * `status: 'failing'` documents count the failures of an event still being retried; they expire
 * with `expiresAt` and are removed when the event then succeeds. `status: 'dead'` documents are
 * the dead letters, kept until someone removes them: list them with `{ status: 'dead' }`.
 */
export interface ConsumerDeadLetterDocument extends DeadLetterCopy {
  consumer: string;
  eventId: string | null;
  status: 'failing' | 'dead';
  /** Set once dead-lettered. */
  reason?: DeadLetterReason;
  attempts: number;
  lastError: string;
  /** The most recent failures (`consumer.errorHistoryLimit`), oldest first. */
  errors: PublishErrorEntry[];
  deadLetteredAt?: Date;
  topic: string;
  partition: number;
  offset: string;
  /**
   * The offset as a sortable text (`offsetSortKey`): replays sort on it, since the offset's own
   * text sorts "102" before "98". Missing on letters of versions before it, until a requeue adds it.
   */
  offsetKey?: string;
  timestamp?: string;
  /** The copy sent to the dead-letter topic, when one is configured. */
  topicCopy?: { topic: string; published: boolean; error?: string };
  firstFailedAt: Date;
  lastFailedAt: Date;
  /** Only on `failing` documents: when an abandoned failure count is removed (first failure + `processedRetentionSeconds`). */
  expiresAt?: Date;
}

/** One record per `(consumer, eventId)`; by Kafka position; by status; replays; failing TTL. */
export const CONSUMER_DEAD_LETTER_INDEXES = [
  {
    key: { consumer: 1, eventId: 1 },
    unique: true,
    name: 'consumer_1_eventId_1',
    partialFilterExpression: { eventId: { $type: 'string' } },
  },
  {
    key: { consumer: 1, topic: 1, partition: 1, offset: 1 },
    name: 'consumer_1_topic_1_partition_1_offset_1',
  },
  { key: { status: 1, deadLetteredAt: 1 }, name: 'status_1_deadLetteredAt_1' },
  {
    key: { topic: 1, partition: 1, offsetKey: 1, _id: 1 },
    name: 'topic_1_partition_1_offsetKey_1__id_1',
  },
  { key: { expiresAt: 1 }, expireAfterSeconds: 0, name: 'expiresAt_ttl' },
] as const satisfies readonly mongo.IndexDescription[];
