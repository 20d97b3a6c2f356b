import type { mongo } from 'mongoose';

/** A count read up to a limit: `capped` when there are more than `count`. */
export interface CappedCount {
  count: number;
  capped: boolean;
}

/** Counts `query` in `collection`, reading at most `limit` + 1 index entries. */
export async function cappedCount(
  collection: mongo.Collection<any>,
  query: mongo.Filter<any>,
  limit: number,
): Promise<CappedCount> {
  const n = await collection.countDocuments(query, { limit: limit + 1 });
  return n > limit ? { count: limit, capped: true } : { count: n, capped: false };
}
