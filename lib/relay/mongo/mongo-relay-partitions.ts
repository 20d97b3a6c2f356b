import type { mongo } from 'mongoose';
import type { OutboxDoc } from '../../documents/outbox-event.document';
import { partitionedRelayIds } from '../../documents/relay-state.document';
import type { PartitionedRelayIds } from '../../documents/relay-state.document';
import { slotsOfPartition } from '../ports/partition-layout';
import type {
  PartitionScope,
  RelayLayout,
  RelayPartitionPorts,
} from '../ports/relay-partitions.store';
import { stampMissingSlots } from './missing-slots';
import { MongoChangeSource } from './mongo-change.source';
import { MongoOutboxRelayStore } from './mongo-outbox-relay.store';
import { MongoPartitionStateStore } from './mongo-partition-state.store';
import { MongoRelayMembershipStore } from './mongo-relay-membership.store';
import { MongoRelayStateStore } from './mongo-relay-state.store';
import { relayCollection } from './relay-collections';
import { RelayFencingGate } from './relay-fencing.gate';

export interface MongoRelayPartitionsOptions {
  collections: { outbox: string; deadLetters: string; relayState: string };
  /** The relay's name (`relay.name`): every state document's `_id` carries it. */
  relayName: string;
  /** The change streams' batch size and idle wait (`relay.batchSize`, `relay.idleMs`). */
  batchSize: number;
  idleMs: number;
}

/**
 * `RelayPartitionPorts` on MongoDB. The documents (in `collections.relayState`) and their
 * `_id`s are listed in `partitionedRelayIds`; the partition's events are a slot range
 * (`slotsOfPartition`) of the outbox, read through the indexes `outbox_relay_slot_order` and
 * `outbox_relay_slot_marked` (`ensureRelayIndexes(..., partitions)`).
 *
 * A layout of one partition is the single relay exactly: its scope is the unfiltered outbox and
 * stream and the `lease:<name>`/`checkpoint:<name>` pair.
 */
export class MongoRelayPartitions implements RelayPartitionPorts {
  readonly membership: MongoRelayMembershipStore;
  private readonly ids: PartitionedRelayIds;
  private readonly gate: RelayFencingGate;
  private readonly outbox: mongo.Collection<OutboxDoc>;

  constructor(
    private readonly db: mongo.Db,
    private readonly options: MongoRelayPartitionsOptions,
  ) {
    this.ids = partitionedRelayIds(options.relayName);
    this.gate = new RelayFencingGate(relayCollection(db, options.collections.relayState), this.ids);
    this.membership = new MongoRelayMembershipStore(
      db,
      options.collections.relayState,
      options.relayName,
      this.ids,
      this.gate,
    );
    this.outbox = relayCollection<OutboxDoc>(db, options.collections.outbox);
  }

  scope(layout: RelayLayout, partition: number): PartitionScope {
    const { collections, relayName } = this.options;
    const stream = { batchSize: this.options.batchSize, idleMs: this.options.idleMs };
    if (layout.partitions === 1) {
      const outbox = new MongoOutboxRelayStore(this.db, collections);
      return {
        outbox,
        changes: new MongoChangeSource(outbox.outbox, stream),
        state: new MongoRelayStateStore(this.db, collections.relayState, relayName),
      };
    }
    if (!Number.isInteger(partition) || partition < 0 || partition >= layout.partitions) {
      throw new RangeError(`partition ${partition} is not one of 0..${layout.partitions - 1}`);
    }
    const range = slotsOfPartition(partition, layout.partitions);
    const outbox = new MongoOutboxRelayStore(this.db, collections, range);
    return {
      outbox,
      changes: new MongoChangeSource(outbox.outbox, stream, range),
      state: new MongoPartitionStateStore(
        this.db,
        collections.relayState,
        this.ids,
        this.gate,
        layout.generation,
        partition,
        layout.partitions,
      ),
    };
  }

  stampMissingSlots(limit: number): Promise<number> {
    return stampMissingSlots(this.outbox, limit);
  }
}
