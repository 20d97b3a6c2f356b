import type { ClientSession, mongo } from 'mongoose';
import {
  PROCESSED_TTL_INDEX,
  PROCESSED_UNIQUE_INDEX,
  type ProcessedEventDocument,
} from '../../documents/processed-event.document';
import { ensureTtlIndex } from '../../documents/ttl-index';
import type { ProcessedEventStore } from '../consume.ports';

/**
 * Inserts processed records in the handler's transaction: the session is the runner's
 * (`currentSession()`), passed explicitly (native driver calls do not read Mongoose's
 * AsyncLocalStorage).
 */
export class MongoProcessedEventStore implements ProcessedEventStore {
  constructor(
    private readonly collection: mongo.Collection<ProcessedEventDocument>,
    private readonly currentSession: () => ClientSession | undefined,
  ) {}

  async insert(consumer: string, eventId: string): Promise<void> {
    const session = this.currentSession();
    await this.collection.insertOne(
      { consumer, eventId, processedAt: new Date() },
      session ? { session } : {},
    );
  }

  async insertMany(consumer: string, eventIds: readonly string[]): Promise<void> {
    const session = this.currentSession();
    const processedAt = new Date();
    await this.collection.insertMany(
      eventIds.map((eventId) => ({ consumer, eventId, processedAt })),
      session ? { session, ordered: true } : { ordered: true },
    );
  }

  async appliedAmong(consumer: string, eventIds: readonly string[]): Promise<string[]> {
    const found = await this.collection
      .find({ consumer, eventId: { $in: [...eventIds] } }, { projection: { _id: 0, eventId: 1 } })
      .toArray();
    return found.map((doc) => doc.eventId);
  }

  async wasApplied(consumer: string, eventId: string): Promise<boolean> {
    const found = await this.collection.findOne({ consumer, eventId }, { projection: { _id: 1 } });
    return found !== null;
  }
}

/**
 * The unique index that makes the dedupe work, and the TTL index that bounds the collection.
 * A changed `processedRetentionSeconds` is applied to the existing TTL index with `collMod`.
 */
export async function ensureProcessedEventIndexes(
  collection: mongo.Collection<ProcessedEventDocument>,
  db: mongo.Db,
  retentionSeconds: number,
): Promise<void> {
  const { key, ...unique } = PROCESSED_UNIQUE_INDEX;
  await collection.createIndex(key, unique);
  await ensureTtlIndex(collection, db, PROCESSED_TTL_INDEX, retentionSeconds);
}

/**
 * Whether the collection has a unique index on exactly the fields `consumer` and `eventId` (in
 * either order or direction: uniqueness of the pair is the same), without a partial filter (it
 * would leave some records unchecked). A missing collection has none.
 */
export async function hasProcessedUniqueIndex(
  collection: mongo.Collection<ProcessedEventDocument>,
): Promise<boolean> {
  let indexes;
  try {
    indexes = await collection.indexes();
  } catch (error) {
    // 26 NamespaceNotFound: the collection does not exist yet.
    if ((error as { code?: number }).code === 26) return false;
    throw error;
  }
  const fields = (key: object) => Object.keys(key).sort().join();
  return indexes.some(
    ({ key, unique, partialFilterExpression }) =>
      unique === true &&
      partialFilterExpression === undefined &&
      fields(key) === fields(PROCESSED_UNIQUE_INDEX.key),
  );
}
