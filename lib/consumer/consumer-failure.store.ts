import type { mongo } from 'mongoose';
import type { ConsumedMessage } from './consumed-message';
import {
  isDuplicateKeyError,
  type ConsumerFailureStore,
  type DeadLetter,
  type DeadLetterReason,
  type FailureEntry,
} from './consume.ports';
import { deadLetterCopy, type DeadLetterCopy } from './dead-letter.copy';

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

/** Digits of the largest Kafka offset (an int64: 9223372036854775807), plus one. */
const OFFSET_KEY_DIGITS = 20;

/**
 * A Kafka offset (an int64 as decimal text) as text that sorts like the number: zero-padded to
 * a fixed width, so exact at any size. Text that is not an offset is kept as it is.
 */
export function offsetSortKey(offset: string): string {
  return /^\d{1,20}$/.test(offset) ? offset.padStart(OFFSET_KEY_DIGITS, '0') : offset;
}

export interface ConsumerFailureStoreOptions {
  errorHistoryLimit: number;
  /** Failing records not retried within this time expire (seconds). */
  failingRetentionSeconds: number;
  /** Largest value copy kept (`consumer.deadLetterMaxValueBytes`). */
  maxValueBytes: number;
}

export async function ensureConsumerDeadLetterIndexes(
  collection: mongo.Collection<ConsumerDeadLetterDocument>,
): Promise<void> {
  await collection.createIndex(
    { consumer: 1, eventId: 1 },
    {
      unique: true,
      name: 'consumer_1_eventId_1',
      partialFilterExpression: { eventId: { $type: 'string' } },
    },
  );
  await collection.createIndex(
    { consumer: 1, topic: 1, partition: 1, offset: 1 },
    { name: 'consumer_1_topic_1_partition_1_offset_1' },
  );
  await collection.createIndex(
    { status: 1, deadLetteredAt: 1 },
    { name: 'status_1_deadLetteredAt_1' },
  );
  // Replays page through a consumer's dead letters in Kafka order.
  await collection.createIndex(
    { topic: 1, partition: 1, offsetKey: 1, _id: 1 },
    { name: 'topic_1_partition_1_offsetKey_1__id_1' },
  );
  await collection.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0, name: 'expiresAt_ttl' });
}

/**
 * Gives a dead letter that is about to be applied again (a requeue) its full retry budget: its
 * failure count restarts at 0, so `recordFailure`, which counts on the same `(consumer, eventId)`
 * document, dead-letters it again only after `maxFailures` new failures. It stays a dead letter
 * (status, reason, error history) until its event is applied; a copy Kafka delivers again of a
 * message already dead-lettered is not requeued and gets no new retries.
 */
export async function restartFailureCount(
  collection: mongo.Collection<ConsumerDeadLetterDocument>,
  consumer: string,
  eventId: string,
): Promise<void> {
  await collection.updateOne({ consumer, eventId, status: 'dead' }, { $set: { attempts: 0 } });
}

/** Keys of `(consumer, eventId)` this process saw fail: only those are cleared after a success. */
const MAX_REMEMBERED_FAILURES = 10_000;

/**
 * Failure counts and dead letters in one collection, written with the native driver and no
 * session: these writes never join the handler's transaction and survive its abort.
 */
export class MongoConsumerFailureStore implements ConsumerFailureStore {
  private readonly failedHere = new Set<string>();

  constructor(
    private readonly collection: mongo.Collection<ConsumerDeadLetterDocument>,
    private readonly options: ConsumerFailureStoreOptions,
  ) {}

  async recordFailure(
    consumer: string,
    eventId: string,
    failure: { at: Date; error: string },
    message: ConsumedMessage,
  ): Promise<number> {
    const count = () =>
      this.collection.findOneAndUpdate(
        { consumer, eventId },
        {
          $inc: { attempts: 1 },
          $set: { lastError: failure.error, lastFailedAt: failure.at },
          // Only when created: a dead letter failing again (a redelivered copy) never expires.
          $setOnInsert: {
            ...this.messageFields(message),
            status: 'failing',
            errors: [],
            firstFailedAt: failure.at,
            expiresAt: new Date(failure.at.getTime() + this.options.failingRetentionSeconds * 1000),
          },
        },
        { upsert: true, returnDocument: 'after', projection: { attempts: 1 } },
      );
    let doc;
    try {
      doc = await count();
    } catch (error) {
      // Two deliveries raced to create the record: the second upsert now finds it.
      if (!isDuplicateKeyError(error)) throw error;
      doc = await count();
    }
    const attempts = doc?.attempts ?? 1;
    await this.collection.updateOne(
      { consumer, eventId },
      {
        $push: {
          errors: {
            $each: [{ at: failure.at, attempt: attempts, error: failure.error }],
            $slice: -this.options.errorHistoryLimit,
          },
        },
      },
    );
    this.remember(consumer, eventId);
    return attempts;
  }

  async clearFailures(consumer: string, eventId: string): Promise<void> {
    const key = `${consumer}\u0000${eventId}`;
    if (!this.failedHere.has(key)) return;
    await this.collection.deleteOne({ consumer, eventId, status: 'failing' });
    this.failedHere.delete(key);
  }

  async deadLetter(letter: DeadLetter): Promise<void> {
    const { consumer, eventId, message } = letter;
    const filter =
      eventId !== null
        ? { consumer, eventId }
        : {
            consumer,
            eventId: null,
            topic: message.topic,
            partition: message.partition,
            offset: message.offset,
          };
    const firstEntry: FailureEntry = {
      at: letter.at,
      attempt: letter.attempts,
      error: letter.lastError,
    };
    const update = {
      $set: {
        // Explicit, not only from the upsert filter (some servers do not copy a null from it).
        eventId,
        status: 'dead' as const,
        reason: letter.reason,
        attempts: letter.attempts,
        lastError: letter.lastError,
        lastFailedAt: letter.at,
        deadLetteredAt: letter.at,
        ...(letter.topicCopy ? { topicCopy: letter.topicCopy } : {}),
      },
      $unset: { expiresAt: '' as const },
      // A failing record already holds the message and its errors; a new one gets them here.
      $setOnInsert: {
        ...this.messageFields(message),
        errors: [firstEntry],
        firstFailedAt: letter.at,
      },
    };
    const run = () => this.collection.updateOne(filter, update, { upsert: true });
    try {
      await run();
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      await run();
    }
  }

  private messageFields(message: ConsumedMessage) {
    return {
      topic: message.topic,
      partition: message.partition,
      offset: message.offset,
      offsetKey: offsetSortKey(message.offset),
      ...(message.timestamp !== undefined ? { timestamp: message.timestamp } : {}),
      ...deadLetterCopy(message, this.options.maxValueBytes),
    };
  }

  private remember(consumer: string, eventId: string): void {
    if (this.failedHere.size >= MAX_REMEMBERED_FAILURES) {
      const oldest = this.failedHere.values().next().value;
      if (oldest !== undefined) this.failedHere.delete(oldest);
    }
    this.failedHere.add(`${consumer}\u0000${eventId}`);
  }
}
