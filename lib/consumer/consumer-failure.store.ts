import { Schema, type ClientSession, type Connection, type Model } from 'mongoose';
import { rawValueText, type ConsumedMessage } from './consumed-message';
import type {
  ConsumerFailureStore,
  DeadLetter,
  DeadLetterReason,
  FailureInfo,
} from './idempotent-consume.flow';
import { isDuplicateKeyError } from './idempotent-consume.flow';

/**
 * One document of `collections.consumerDeadLetters` per `(consumer, eventId)` that failed
 * (or per message without an event id). `status: 'failing'` counts failures while the message is
 * still retried (such records expire with `expiresAt`, and are removed when the event then
 * succeeds); `status: 'dead'` records are kept until someone deletes them.
 */
export interface ConsumerDeadLetterDocument {
  consumer: string;
  eventId: string | null;
  status: 'failing' | 'dead';
  reason: DeadLetterReason;
  detail?: string;
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  headers: Array<{ key: string; value: string }>;
  /** The raw message value as text. */
  value: string | null;
  failures: number;
  errorHistory: FailureInfo[];
  firstFailedAt: Date;
  lastFailedAt: Date;
  deadLetteredAt?: Date;
  expiresAt?: Date;
}

export const CONSUMER_DEAD_LETTER_MODEL = 'OutboxConsumerDeadLetter';

const schema = new Schema<ConsumerDeadLetterDocument>(
  {
    consumer: { type: String, required: true },
    eventId: { type: String, default: null },
    status: { type: String, required: true },
    reason: { type: String, required: true },
    detail: String,
    topic: String,
    partition: Number,
    offset: String,
    key: { type: String, default: null },
    headers: [{ _id: false, key: String, value: String }],
    value: { type: String, default: null },
    failures: { type: Number, default: 0 },
    errorHistory: [{ _id: false, at: Date, name: String, message: String }],
    firstFailedAt: Date,
    lastFailedAt: Date,
    deadLetteredAt: Date,
    expiresAt: Date,
  },
  { versionKey: false, autoIndex: false, autoCreate: false },
);

export function consumerDeadLetterModel(
  connection: Connection,
  collection: string,
): Model<ConsumerDeadLetterDocument> {
  const name = `${CONSUMER_DEAD_LETTER_MODEL}:${collection}`;
  return (
    (connection.models[name] as Model<ConsumerDeadLetterDocument> | undefined) ??
    connection.model<ConsumerDeadLetterDocument>(name, schema, collection)
  );
}

export async function ensureConsumerDeadLetterIndexes(
  model: Model<ConsumerDeadLetterDocument>,
): Promise<void> {
  await model.collection.createIndex(
    { consumer: 1, eventId: 1 },
    {
      unique: true,
      name: 'consumer_1_eventId_1',
      partialFilterExpression: { eventId: { $type: 'string' } },
    },
  );
  await model.collection.createIndex(
    { consumer: 1, topic: 1, partition: 1, offset: 1 },
    { name: 'consumer_1_topic_1_partition_1_offset_1' },
  );
  await model.collection.createIndex(
    { status: 1, deadLetteredAt: 1 },
    { name: 'status_1_deadLetteredAt_1' },
  );
  await model.collection.createIndex(
    { expiresAt: 1 },
    { expireAfterSeconds: 0, name: 'expiresAt_ttl' },
  );
}

/**
 * Explicitly no session (Mongoose then ignores its AsyncLocalStorage): these writes must never
 * join the handler's transaction. Mongoose accepts `null`; its typings only say `ClientSession`.
 */
const NO_SESSION = { session: null } as unknown as { session?: ClientSession };

/** Keys of `(consumer, eventId)` this process saw fail: only those are cleared after a success. */
const MAX_REMEMBERED_FAILURES = 10_000;

/**
 * Failure counts and dead letters in one collection. Every call passes `session: null`: these
 * writes must survive the handler's aborted transaction.
 */
export class MongooseConsumerFailureStore implements ConsumerFailureStore {
  private readonly failedHere = new Set<string>();

  constructor(
    private readonly model: Model<ConsumerDeadLetterDocument>,
    private readonly errorHistoryLimit: number,
    /** Failing records not retried within this time expire (seconds). */
    private readonly failingRetentionSeconds: number,
  ) {}

  async recordFailure(
    consumer: string,
    eventId: string,
    failure: FailureInfo,
    message: ConsumedMessage,
  ): Promise<number> {
    const update = {
      $inc: { failures: 1 },
      $push: { errorHistory: { $each: [failure], $slice: -this.errorHistoryLimit } },
      $set: {
        ...messageFields(message),
        lastFailedAt: failure.at,
        expiresAt: new Date(failure.at.getTime() + this.failingRetentionSeconds * 1000),
      },
      $setOnInsert: { firstFailedAt: failure.at, status: 'failing', reason: 'handler-failed' },
    };
    const run = () =>
      this.model
        .findOneAndUpdate({ consumer, eventId }, update, {
          upsert: true,
          new: true,
          ...NO_SESSION,
          projection: { failures: 1 },
        })
        .lean();
    let doc;
    try {
      doc = await run();
    } catch (error) {
      // Two deliveries raced to create the record: the second upsert now finds it.
      if (!isDuplicateKeyError(error)) throw error;
      doc = await run();
    }
    this.remember(consumer, eventId);
    return doc?.failures ?? 1;
  }

  async clearFailures(consumer: string, eventId: string): Promise<void> {
    const key = `${consumer}\u0000${eventId}`;
    if (!this.failedHere.has(key)) return;
    await this.model.deleteOne({ consumer, eventId, status: 'failing' }, NO_SESSION);
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
    const now = new Date();
    const update: Record<string, unknown> = {
      $set: {
        ...messageFields(message),
        // Explicit, not only from the upsert filter (some servers do not copy a null from it).
        eventId,
        status: 'dead',
        reason: letter.reason,
        detail: letter.detail,
        deadLetteredAt: now,
        lastFailedAt: letter.error.at,
      },
      $unset: { expiresAt: '' },
      $setOnInsert: { firstFailedAt: letter.error.at, failures: 0 },
    };
    // A handler failure is already in the history (recordFailure); other reasons add theirs.
    if (letter.reason !== 'handler-failed') {
      update.$push = { errorHistory: { $each: [letter.error], $slice: -this.errorHistoryLimit } };
    }
    const run = () => this.model.updateOne(filter, update, { upsert: true, ...NO_SESSION });
    try {
      await run();
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      await run();
    }
  }

  private remember(consumer: string, eventId: string): void {
    if (this.failedHere.size >= MAX_REMEMBERED_FAILURES) {
      const oldest = this.failedHere.values().next().value;
      if (oldest !== undefined) this.failedHere.delete(oldest);
    }
    this.failedHere.add(`${consumer}\u0000${eventId}`);
  }
}

function messageFields(message: ConsumedMessage) {
  return {
    topic: message.topic,
    partition: message.partition,
    offset: message.offset,
    key: message.key,
    headers: Object.keys(message.headers).map((key) => ({ key, value: message.headers[key] })),
    value: rawValueText(message.value),
  };
}
