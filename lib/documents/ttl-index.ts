import type { mongo } from 'mongoose';

const INDEX_CONFLICTS: readonly unknown[] = [85, 86]; // IndexOptionsConflict, IndexKeySpecsConflict

/**
 * Creates the TTL index `index` with `expireAfterSeconds`; when it exists with another expiry
 * (the retention option changed since), updates it in place with `collMod`.
 */
export async function ensureTtlIndex(
  collection: mongo.Collection<any>,
  db: mongo.Db,
  index: { key: Record<string, 1>; name: string },
  expireAfterSeconds: number,
): Promise<void> {
  const options = { name: index.name, expireAfterSeconds };
  try {
    await collection.createIndex(index.key, options);
  } catch (error) {
    if (!INDEX_CONFLICTS.includes((error as { code?: unknown } | null)?.code)) throw error;
    await db.command({ collMod: collection.collectionName, index: options });
  }
}
