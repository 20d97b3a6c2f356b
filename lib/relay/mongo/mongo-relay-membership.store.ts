import { mongo } from 'mongoose';
import type {
  PartitionLease,
  RelayLayout,
  RelayMember,
  RelayMembershipStore,
} from '../ports/relay-partitions.store';
import { insertUnlessPresent } from './mongo-relay-state.store';
import type { StateDoc } from './mongo-relay-state.store';
import { relayCollection } from './relay-collections';
import { CLOSED_BY_LAYOUT, RelayFencingGate } from './relay-fencing.gate';
import type { PartitionedRelayIds } from './relay-partition-ids';

interface MemberDoc {
  _id: string;
  relay: string;
  owner: string;
  partitions: number;
  holding: number[];
  expiresAt: Date;
}

interface LayoutDoc {
  _id: string;
  partitions: number;
  generation: number;
  switchedAt: Date;
}

type LeaseDoc = StateDoc & { partition?: number };

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Heartbeats, the stored layout and the layout switch, in `collections.relayState` (ids:
 * `partitionedRelayIds`). Read from the primary at read concern majority, written with
 * `w: 'majority'` (`RELAY_COLLECTION_OPTIONS`); every time compared is the server's (the
 * caller passes times derived from `hello.localTime`), never this process's clock.
 */
export class MongoRelayMembershipStore implements RelayMembershipStore {
  private readonly members: mongo.Collection<MemberDoc>;
  private readonly layouts: mongo.Collection<LayoutDoc>;
  private readonly leaseDocs: mongo.Collection<LeaseDoc>;

  constructor(
    db: mongo.Db,
    collection: string,
    private readonly relayName: string,
    private readonly ids: PartitionedRelayIds,
    private readonly gate: RelayFencingGate,
  ) {
    this.members = relayCollection<MemberDoc>(db, collection);
    this.layouts = relayCollection<LayoutDoc>(db, collection);
    this.leaseDocs = relayCollection<LeaseDoc>(db, collection);
  }

  async heartbeat(member: RelayMember): Promise<void> {
    await this.members.updateOne(
      { _id: this.ids.member(member.owner) },
      {
        $set: {
          relay: this.relayName,
          owner: member.owner,
          partitions: member.partitions,
          holding: [...member.holding],
          expiresAt: member.expiresAt,
        },
      },
      { upsert: true },
    );
  }

  async liveMembers(serverNow: Date): Promise<RelayMember[]> {
    // An anchored prefix of `_id`: served by the `_id` index.
    const docs = await this.members
      .find({
        _id: { $regex: `^${escapeRegExp(this.ids.memberPrefix)}` },
        expiresAt: { $gt: serverNow },
      } as mongo.Filter<MemberDoc>)
      .sort({ _id: 1 })
      .toArray();
    return docs.map(({ owner, partitions, holding, expiresAt }) => ({
      owner,
      partitions,
      holding: holding ?? [],
      expiresAt,
    }));
  }

  async leave(owner: string): Promise<void> {
    await this.members.deleteOne({ _id: this.ids.member(owner) });
  }

  /**
   * The stored layout. A layout of one partition whose switch stopped before the single lease
   * was reopened (a crash between the two steps of `switchLayout`) is completed here.
   */
  async layout(): Promise<RelayLayout | undefined> {
    const doc = await this.layouts.findOne({ _id: this.ids.layout });
    if (!doc) return undefined;
    const layout = { partitions: doc.partitions, generation: doc.generation };
    if (layout.partitions === 1) {
      const single = await this.leaseDocs.findOne({ _id: this.ids.single.lease });
      const gate = single as (LeaseDoc & { layoutGeneration?: number }) | null;
      if (gate?.owner === CLOSED_BY_LAYOUT && (gate.layoutGeneration ?? 0) < layout.generation) {
        await this.gate.reopen(layout.generation);
      }
    }
    return layout;
  }

  /**
   * Without a stored layout, or with a layout of one partition: the single relay lease (as
   * partition 0), the only lease such a deployment has. Otherwise the leases of `layout`'s
   * partitions (its own count; `partitions` is not needed then) that were ever taken.
   */
  async leases(layout: RelayLayout | undefined, _partitions: number): Promise<PartitionLease[]> {
    if (!layout || layout.partitions === 1) {
      const single = await this.leaseDocs.findOne({ _id: this.ids.single.lease });
      if (!single || single.owner === undefined || typeof single.fencing !== 'number') return [];
      return [
        {
          partition: 0,
          owner: single.owner,
          fencing: single.fencing,
          expiresAt: single.expiresAt ?? new Date(0),
        },
      ];
    }
    const ids = Array.from(
      { length: layout.partitions },
      (_, p) => this.ids.partition(layout.generation, p).lease,
    );
    const docs = await this.leaseDocs.find({ _id: { $in: ids } }).toArray();
    return docs
      .filter((doc) => typeof doc.fencing === 'number' && doc.owner !== undefined)
      .map((doc) => ({
        partition: doc.partition ?? ids.indexOf(doc._id),
        owner: doc.owner!,
        fencing: doc.fencing!,
        expiresAt: doc.expiresAt ?? new Date(0),
      }))
      .sort((a, b) => a.partition - b.partition);
  }

  /**
   * 1. Compare-and-set of the layout document on `generation` (an insert when none is stored:
   *    the unique `_id` lets only one instance create it).
   * 2. The single relay lease: closed for a layout of several partitions, reopened (free, at a
   *    fencing number above every one given) for one partition; its checkpoint's token is
   *    removed, so the single relay of the new layout starts from the collection, not from
   *    where it stood before the previous switch.
   * A crash between 1 and 2 is repaired by whoever comes next: a partition lease is only taken
   * after closing the single lease for its layout, and `layout()` reopens a single lease left
   * closed under a layout of one partition.
   */
  async switchLayout(
    expected: RelayLayout | undefined,
    partitions: number,
  ): Promise<RelayLayout | undefined> {
    const generation = (expected?.generation ?? 0) + 1;
    const doc: LayoutDoc = {
      _id: this.ids.layout,
      partitions,
      generation,
      switchedAt: new Date(),
    };
    if (expected === undefined) {
      if (!(await insertUnlessPresent(this.layouts, doc))) return undefined;
    } else {
      const result = await this.layouts.updateOne(
        { _id: this.ids.layout, generation: expected.generation },
        { $set: { partitions, generation, switchedAt: doc.switchedAt } },
      );
      if (result.matchedCount !== 1) return undefined;
    }
    if (partitions === 1) {
      await this.gate.reopen(generation);
      await this.leaseDocs.updateOne(
        { _id: this.ids.single.checkpoint },
        { $unset: { token: '' }, $set: { savedAt: new Date() } },
      );
    } else {
      await this.gate.close(generation);
    }
    return { partitions, generation };
  }
}
