import { createHash } from 'node:crypto';

/**
 * How many slots the aggregates are hashed into. Fixed forever: the slot is stored on every
 * outbox document at emit time, and relay partitions are contiguous ranges of slots, so the
 * number of partitions can change without rewriting a document.
 */
export const SLOT_COUNT = 4096;

/**
 * The slot of an aggregate: the first four bytes of SHA-256 over `aggregateType`, a NUL and
 * `aggregateId`, modulo `SLOT_COUNT`. Stable across processes, versions and platforms (it is
 * stored, so it must never change).
 */
export function eventSlot(aggregateType: string, aggregateId: string): number {
  const digest = createHash('sha256')
    .update(aggregateType)
    .update('\u0000')
    .update(aggregateId)
    .digest();
  return digest.readUInt32BE(0) % SLOT_COUNT;
}
