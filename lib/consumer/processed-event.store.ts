import { Schema, type ClientSession, type Connection, type Model } from 'mongoose';
import type { ProcessedEventStore } from './idempotent-consume.flow';

/** One `(consumer, eventId)` an `@IdempotentHandler` applied. Expires `processedRetentionSeconds` after `processedAt`. */
export interface ProcessedEventDocument {
  consumer: string;
  eventId: string;
  processedAt: Date;
}

export const PROCESSED_EVENT_MODEL = 'OutboxProcessedEvent';

const schema = new Schema<ProcessedEventDocument>(
  {
    consumer: { type: String, required: true },
    eventId: { type: String, required: true },
    processedAt: { type: Date, required: true },
  },
  { versionKey: false, autoIndex: false, autoCreate: false, strict: 'throw' },
);

export function processedEventModel(
  connection: Connection,
  collection: string,
): Model<ProcessedEventDocument> {
  const name = `${PROCESSED_EVENT_MODEL}:${collection}`;
  return (
    (connection.models[name] as Model<ProcessedEventDocument> | undefined) ??
    connection.model<ProcessedEventDocument>(name, schema, collection)
  );
}

/**
 * Writes processed records through a Mongoose model, in the running transaction: the session is
 * the runner's (`currentSession()`), which is also what Mongoose's AsyncLocalStorage holds.
 */
export class MongooseProcessedEventStore implements ProcessedEventStore {
  constructor(
    private readonly model: Model<ProcessedEventDocument>,
    private readonly currentSession: () => ClientSession | undefined,
  ) {}

  async insert(consumer: string, eventId: string): Promise<void> {
    const session = this.currentSession();
    await this.model.create([{ consumer, eventId, processedAt: new Date() }], {
      ...(session ? { session } : {}),
    });
  }
}

/**
 * The unique index that makes the dedupe work, and the TTL index that bounds the collection.
 * A changed `processedRetentionSeconds` is applied to the existing TTL index with `collMod`.
 */
export async function ensureProcessedEventIndexes(
  model: Model<ProcessedEventDocument>,
  retentionSeconds: number,
): Promise<void> {
  await model.collection.createIndex(
    { consumer: 1, eventId: 1 },
    { unique: true, name: 'consumer_1_eventId_1' },
  );
  try {
    await model.collection.createIndex(
      { processedAt: 1 },
      { expireAfterSeconds: retentionSeconds, name: 'processedAt_ttl' },
    );
  } catch (error) {
    const code = (error as { code?: number }).code;
    if (code !== 85 && code !== 86) throw error;
    await model.db.db!.command({
      collMod: model.collection.collectionName,
      index: { name: 'processedAt_ttl', expireAfterSeconds: retentionSeconds },
    });
  }
}
