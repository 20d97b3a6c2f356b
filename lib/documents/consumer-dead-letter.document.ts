import type { mongo } from 'mongoose';
import type { DeadLetterReason, FailureEntry } from '../consumer/consume.ports';
import type { DeadLetterCopy } from '../consumer/dead-letter.copy';

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
  errors: FailureEntry[];
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
