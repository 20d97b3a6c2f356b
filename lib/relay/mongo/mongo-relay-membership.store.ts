import { mongo } from 'mongoose';
import {
  CLOSED_BY_LAYOUT,
  type PartitionedRelayIds,
  type RelayLayoutDoc,
  type RelayLeaseDoc,
  type RelayMemberDoc,
} from '../../documents/relay-state.document';
import type {
  PartitionLease,
  RelayLayout,
  RelayMember,
  RelayMembershipStore,
} from '../ports/relay-partitions.store';
import { relayCollection } from './relay-collections';
import { RelayFencingGate } from './relay-fencing.gate';
import { RelayLayoutSwitch, SWITCH_CLAIM_STALE_MS, storedLayout } from './relay-layout.switch';
import { escapeRegExp } from '../../common/escape-reg-exp';

/**
 * Heartbeats, the stored layout and the layout switch, in `collections.relayState` (ids:
 * `partitionedRelayIds`). Read from the primary at read concern majority, written with
 * `w: 'majority'` (`RELAY_COLLECTION_OPTIONS`); every time compared is the server's (the
 * caller passes times derived from `hello.localTime`), never this process's clock.
 */
export class MongoRelayMembershipStore implements RelayMembershipStore {
  private readonly members: mongo.Collection<RelayMemberDoc>;
  private readonly layouts: mongo.Collection<RelayLayoutDoc>;
  private readonly leaseDocs: mongo.Collection<RelayLeaseDoc>;
  private readonly switcher: RelayLayoutSwitch;

  /** `switchClaimStaleMs`: when a switcher's claim counts as abandoned (`RelayLayoutSwitch`). */
  constructor(
    db: mongo.Db,
    collection: string,
    private readonly relayName: string,
    private readonly ids: PartitionedRelayIds,
    private readonly gate: RelayFencingGate,
    switchClaimStaleMs: number = SWITCH_CLAIM_STALE_MS,
  ) {
    this.members = relayCollection<RelayMemberDoc>(db, collection);
    this.layouts = relayCollection<RelayLayoutDoc>(db, collection);
    this.leaseDocs = relayCollection<RelayLeaseDoc>(db, collection);
    this.switcher = new RelayLayoutSwitch(db, collection, ids, gate, switchClaimStaleMs);
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
      } as mongo.Filter<RelayMemberDoc>)
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
   * The stored layout. Repairs on the way what a switcher that died or stalled left behind
   * (`RelayLayoutSwitch.repair`: leases of this layout closed by a claim that is no longer
   * live), and a layout of one partition whose switch stopped before the single lease was
   * reopened (a crash between the compare-and-set and the reopening in `switchLayout`).
   */
  async layout(): Promise<RelayLayout | undefined> {
    const doc = await this.layouts.findOne({ _id: this.ids.layout });
    await this.switcher.repair(doc);
    const layout = storedLayout(doc);
    if (layout?.partitions === 1) {
      const single = await this.leaseDocs.findOne({ _id: this.ids.single.lease });
      if (
        single?.owner === CLOSED_BY_LAYOUT &&
        (single.layoutGeneration ?? 0) < layout.generation
      ) {
        await this.gate.reopen(layout.generation);
      }
    }
    return layout;
  }

  /**
   * Without a stored layout, or with a layout of one partition: the single relay lease (as
   * partition 0), the only lease such a deployment has. Otherwise the leases of `layout`'s
   * partitions that were ever taken.
   */
  async leases(layout: RelayLayout | undefined): Promise<PartitionLease[]> {
    const ids = this.switcher.leaseIds(layout); // the single lease has no `partition`: index 0
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
   * 1. `RelayLayoutSwitch.switch` (undefined: nothing changed).
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
    const switched = await this.switcher.switch(expected, partitions);
    if (!switched) return undefined;
    if (partitions === 1) {
      await this.gate.reopen(switched.generation);
      await this.leaseDocs.updateOne(
        { _id: this.ids.single.checkpoint },
        { $unset: { token: '' }, $set: { savedAt: new Date() } },
      );
    } else {
      await this.gate.close(switched.generation);
    }
    return switched;
  }
}
