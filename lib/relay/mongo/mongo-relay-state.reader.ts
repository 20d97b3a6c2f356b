import type { mongo } from 'mongoose';
import { PUBLISHABLE_NOW, type OutboxDoc } from '../../documents/outbox-event.document';
import {
  partitionedRelayIds,
  relayStateIds,
  type RelayCheckpointDoc,
  type RelayLayoutDoc,
  type RelayLeaseDoc,
} from '../../documents/relay-state.document';
import { slotsOfPartition } from '../ports/partition-layout';
import type { RelayStateReader, StoredPartitionedRelay } from '../ports/relay-state.reader';
import type { StoredCheckpoint } from '../ports/relay-state.store';
import { storedCheckpoint } from './mongo-relay-state.store';
import { relayCollection } from './relay-collections';
import { slotsIn } from './slot-range.filters';
import { ScheduledEventReads } from './scheduled-events.reads';

type RelayStateCollections = { outbox: string; relayState: string };

export function mongoRelayStateReader(
  db: mongo.Db,
  collections: RelayStateCollections,
): RelayStateReader {
  return {
    async oldestPendingAt() {
      // Scheduled events are not lag until due (the health check reports them apart).
      const oldest = await relayCollection<{ occurredAt: Date; status: string }>(
        db,
        collections.outbox,
      ).findOne(PUBLISHABLE_NOW, { sort: { _id: 1 }, projection: { occurredAt: 1 } });
      return oldest ? new Date(oldest.occurredAt) : undefined;
    },
    scheduledStats: (now) =>
      new ScheduledEventReads(relayCollection<OutboxDoc>(db, collections.outbox), {}).stats(now),
    async checkpoint(relayName) {
      const id = relayStateIds(relayName).checkpoint;
      return (await readStoredCheckpoints(db, collections.relayState, [id])).get(id);
    },
    partitionedRelay: (relayName) => readPartitionedRelay(db, collections, relayName),
  };
}

/**
 * Reads relay `relayName`'s stored layout from `collections.relayState` and, when it has
 * several partitions, each partition's lease and checkpoint (`partitionedRelayIds`) and the
 * oldest pending event of its slot range in the outbox.
 */
async function readPartitionedRelay(
  db: mongo.Db,
  collections: RelayStateCollections,
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
        return outbox.findOne(
          { ...PUBLISHABLE_NOW, ...slotsIn(slotsOfPartition(p, partitions)) },
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

/**
 * Several checkpoints in one read, by `_id` (e.g. every partition's
 * `checkpoint:<name>:g<generation>:p<partition>`): the ones never saved are absent.
 */
async function readStoredCheckpoints(
  db: mongo.Db,
  collection: string,
  checkpointIds: readonly string[],
): Promise<Map<string, StoredCheckpoint>> {
  const docs = await relayCollection<RelayCheckpointDoc>(db, collection)
    .find({ _id: { $in: [...checkpointIds] } }, { projection: { token: 1, savedAt: 1 } })
    .toArray();
  return new Map(docs.map((doc) => [doc._id, storedCheckpoint(doc)]));
}
