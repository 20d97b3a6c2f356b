import type { OutboxReadCollections } from '../../operations/read/outbox-read.collections';

export interface LeaseView {
  id: string;
  owner?: string;
  fencing?: number;
  partition?: number;
  expiresAt?: Date;
  /** By this process's clock (the lease itself is judged by the server's). */
  live: boolean;
}

export interface CheckpointView {
  id: string;
  savedAt?: Date;
  hasPosition: boolean;
}

/**
 * The relay's leases (holder, fencing, expiry) and checkpoints as stored in
 * `collections.relayState`: two `_id` prefix reads on the `_id` index. The collection holds one
 * lease and one checkpoint per relay partition, so this is small whatever the outbox's size.
 */
export async function readRelayLeases(
  collections: OutboxReadCollections,
  now = Date.now(),
): Promise<{ leases: LeaseView[]; checkpoints: CheckpointView[] }> {
  const state = collections.relayState;
  const [leases, checkpoints] = await Promise.all([
    state.find({ _id: { $regex: '^lease:' } }, { sort: { _id: 1 }, limit: 500 }).toArray(),
    state.find({ _id: { $regex: '^checkpoint:' } }, { sort: { _id: 1 }, limit: 500 }).toArray(),
  ]);
  return {
    leases: leases
      .filter((l) => !l.switchClaim && (l.expiresAt?.getFullYear() ?? 0) < 9999)
      .map((l) => ({
        id: l._id,
        owner: l.owner,
        fencing: l.fencing,
        partition: l.partition,
        expiresAt: l.expiresAt,
        live: !!l.owner && !!l.expiresAt && l.expiresAt.getTime() > now,
      })),
    checkpoints: checkpoints.map((c) => ({
      id: c._id,
      savedAt: c.savedAt,
      hasPosition: c.token !== undefined && c.token !== null,
    })),
  };
}
