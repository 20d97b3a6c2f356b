import type { Logger } from '@nestjs/common';
import type { mongo } from 'mongoose';
import { OutboxError } from '../common/errors/outbox.error';
import type { DeadLetterPurgeResult } from './dead-letter.results';

/** `batchSize` of a requeue, checked (default 100). */
export function requeueBatchSize(batchSize = 100): number {
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
    throw new OutboxError(
      `requeueMany: batchSize must be an integer from 1 to 10000, got ${String(batchSize)}.`,
      'OUTBOX_INVALID_ARGUMENT',
      { batchSize },
    );
  }
  return batchSize;
}

/** The documents `query` selects, oldest dead letter first, at most `limit`, without `_id`. */
export function listMatching<T>(
  collection: mongo.Collection<any>,
  query: Record<string, unknown>,
  limit: number,
): Promise<T[]> {
  return collection
    .find(query, { sort: { deadLetteredAt: 1, _id: 1 }, limit, projection: { _id: 0 } })
    .toArray() as Promise<T[]>;
}

/** Deletes the documents `query` selects (with `dryRun`, counts them) and says what it did. */
export async function purgeMatching(
  collection: mongo.Collection<any>,
  query: Record<string, unknown>,
  dryRun: boolean | undefined,
  logger: Logger,
  what: string,
): Promise<DeadLetterPurgeResult> {
  if (dryRun) return { dryRun: true, matched: await collection.countDocuments(query), deleted: 0 };
  const { deletedCount } = await collection.deleteMany(query);
  logger.log(`${deletedCount} ${what} purged`);
  return { dryRun: false, matched: deletedCount, deleted: deletedCount };
}
