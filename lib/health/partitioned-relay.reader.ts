import type { mongo } from 'mongoose';
import type { StoredCheckpoint } from '../relay/ports/relay-state.store';
import { slotsOfPartition } from '../relay/ports/partition-layout';
import { relayCollection } from '../relay/mongo/relay-collections';
import type { OutboxDoc } from '../documents/outbox-event.document';
import { partitionedRelayIds } from '../documents/relay-state.document';
import type { RelayLayoutDoc, RelayLeaseDoc } from '../documents/relay-state.document';
import { readStoredCheckpoints } from '../relay/mongo/stored-checkpoint.reader';

/** A partition's lease as stored (expired or released ones included). */
export type StoredPartitionLease = Required<Pick<RelayLeaseDoc, 'owner' | 'expiresAt'>> &
  Pick<RelayLeaseDoc, 'fencing'>;

/** What the database says of one partition of the stored layout. */
export interface StoredPartition {
  partition: number;
  lease?: StoredPartitionLease;
  checkpoint?: StoredCheckpoint;
  /** `occurredAt` of its oldest pending event (slot in its range), if any. */
  oldestPendingAt?: Date;
}

/** The stored layout of several partitions, and every partition's documents. */
export interface StoredPartitionedRelay {
  partitions: number;
  generation: number;
  each: StoredPartition[];
}

/**
 * Reads relay `relayName`'s stored layout from `collections.relayState` and, when it has
 * several partitions, each partition's lease and checkpoint (`partitionedRelayIds`) and the
 * oldest pending event of its slot range in the outbox. Undefined when no layout is stored or
 * it has one partition (the single relay's `lease:<name>` and `checkpoint:<name>` then apply).
 * Read from the primary at read concern majority, as the relays read them.
 */
export async function readPartitionedRelay(
  db: mongo.Db,
  collections: { outbox: string; relayState: string },
  relayName: string,
): Promise<StoredPartitionedRelay | undefined> {
  const ids = partitionedRelayIds(relayName);
  const state = relayCollection<RelayLeaseDoc & Partial<RelayLayoutDoc>>(
    db,
    collections.relayState,
  );
  const layout = await state.findOne({ _id: ids.layout });
  const partitions = layout?.partitions;
  const generation = layout?.generation;
  if (typeof partitions !== 'number' || partitions <= 1 || typeof generation !== 'number') {
    return undefined;
  }
  const numbers = Array.from({ length: partitions }, (_, p) => p);
  const leaseIds = numbers.map((p) => ids.partition(generation, p).lease);
  const checkpointIds = numbers.map((p) => ids.partition(generation, p).checkpoint);
  const outbox = relayCollection<OutboxDoc>(db, collections.outbox);
  const [leaseDocs, checkpoints, oldest] = await Promise.all([
    state.find({ _id: { $in: leaseIds } }).toArray(),
    readStoredCheckpoints(db, collections.relayState, checkpointIds),
    Promise.all(
      numbers.map((p) => {
        const range = slotsOfPartition(p, partitions);
        return outbox.findOne(
          { status: 'pending', slot: { $gte: range.from, $lt: range.to } },
          { sort: { _id: 1 }, projection: { occurredAt: 1 } },
        );
      }),
    ),
  ]);
  const leases = new Map(leaseDocs.map((doc) => [doc._id, doc]));
  return {
    partitions,
    generation,
    each: numbers.map((p) => {
      const lease = leases.get(leaseIds[p]);
      const pending = oldest[p]?.occurredAt;
      return {
        partition: p,
        ...(lease?.owner !== undefined
          ? {
              lease: {
                owner: lease.owner,
                ...(typeof lease.fencing === 'number' ? { fencing: lease.fencing } : {}),
                expiresAt: lease.expiresAt ?? new Date(0),
              },
            }
          : {}),
        ...(checkpoints.has(checkpointIds[p])
          ? { checkpoint: checkpoints.get(checkpointIds[p]) }
          : {}),
        ...(pending ? { oldestPendingAt: new Date(pending) } : {}),
      };
    }),
  };
}
