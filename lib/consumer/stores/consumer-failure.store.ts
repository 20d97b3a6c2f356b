import type { mongo } from 'mongoose';
import {
  CONSUMER_DEAD_LETTER_INDEXES,
  type ConsumerDeadLetterDocument,
} from '../../documents/consumer-dead-letter.document';
import type { ConsumedMessage } from '../input/consumed-message';
import { isDuplicateKeyError, type ConsumerFailureStore, type DeadLetter } from '../consume.ports';
import { deadLetterCopy } from '../input/dead-letter.copy';

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
  for (const { key, ...options } of CONSUMER_DEAD_LETTER_INDEXES) {
    await collection.createIndex(key, options);
  }
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

/**
 * Runs `upsert`, and once more when it lost a race to create the record (a duplicate key: two
 * deliveries upserted at once); the second run finds the record and updates it.
 */
async function upsertRacing<T>(upsert: () => Promise<T>): Promise<T> {
  try {
    return await upsert();
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
    return upsert();
  }
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
    const doc = await upsertRacing(() =>
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
      ),
    );
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
        errors: [{ at: letter.at, attempt: letter.attempts, error: letter.lastError }],
        firstFailedAt: letter.at,
      },
    };
    await upsertRacing(() => this.collection.updateOne(filter, update, { upsert: true }));
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
