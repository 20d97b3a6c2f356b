import { createHash } from 'node:crypto';
import { SLOT_COUNT } from '../documents/outbox-event.document';

export { SLOT_COUNT };

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
