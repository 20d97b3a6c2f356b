import { randomUUID } from 'node:crypto';
import type { mongo } from 'mongoose';
import { CLOSED_BY_SWITCH, LEASE_CLOSED_UNTIL } from '../../documents/relay-state.document';
import type {
  PartitionedRelayIds,
  RelayLayoutDoc,
  RelayLeaseDoc,
  SwitchClaim,
} from '../../documents/relay-state.document';
import type { RelayLayout } from '../ports/relay-partitions.store';
import { insertUnlessPresent } from './mongo-relay-state.store';
import { relayCollection, serverTime } from './relay-collections';
import type { RelayFencingGate } from './relay-fencing.gate';

/** A claim older than this (server time) belongs to a switcher that died or stalled. */
export const SWITCH_CLAIM_STALE_MS = 30_000;

/** The stored layout that `doc` describes (undefined: none stored). */
export function storedLayout(doc: RelayLayoutDoc | null): RelayLayout | undefined {
  if (!doc || doc.generation === 0 || typeof doc.partitions !== 'number') return undefined;
  return { partitions: doc.partitions, generation: doc.generation };
}

/**
 * The layout switch proper: no lease of the old layout may be valid when the layout changes,
 * and none may be taken or renewed after it. A check before the switch cannot promise that
 * (a relay of the old layout can take or renew a lease between the check and the switch), so
 * the switch closes the old leases itself, each with one conditional update: every update on
 * one document is atomic, its filter and its change included
 * (https://www.mongodb.com/docs/manual/core/write-operations-atomicity/), so a lease is closed
 * only if it is expired when the update applies, and once closed (held by `CLOSED_BY_SWITCH`
 * until the year 9999, at a fencing number from the global counter) it can be neither taken
 * (that needs it expired, or ours) nor renewed (that needs our owner and fencing number).
 *
 * MongoDB writes several documents atomically only in a transaction, so the steps are:
 * 1. claim the switch on the layout document (compare-and-set on `generation`, no live claim;
 *    the claim takes the next number of the document's own `claims` counter);
 * 2. close every lease of the old layout (a lease never taken is created closed; the unique
 *    index on `_id` refuses that when someone created it first:
 *    https://www.mongodb.com/docs/manual/core/index-unique/); if one is valid, reopen the ones
 *    closed (expired) and give up: the caller tries again at its next tick;
 * 3. the layout compare-and-set, only while the claim is still ours. It is the only way the
 *    generation goes up, so when it happens every old lease is closed, for good.
 * A switcher that dies or stalls between 1 and 3 leaves old leases closed while the layout is
 * unchanged. They are repaired by number: a closing is binding only while its claim is the
 * document's live claim. A claim goes stale after `staleMs` (server time); the next switcher
 * takes it over (its step 2 closes again what an older claim closed) or `repair`, run with every
 * read of the layout, removes it and reopens what older claims left closed. A stalled switcher
 * that comes back finds its claim gone, and its step 3 fails.
 */
export class RelayLayoutSwitch {
  private readonly layouts: mongo.Collection<RelayLayoutDoc>;
  private readonly leaseDocs: mongo.Collection<RelayLeaseDoc>;

  constructor(
    private readonly db: mongo.Db,
    collection: string,
    private readonly ids: PartitionedRelayIds,
    private readonly gate: RelayFencingGate,
    private readonly staleMs: number = SWITCH_CLAIM_STALE_MS,
  ) {
    this.layouts = relayCollection<RelayLayoutDoc>(db, collection);
    this.leaseDocs = relayCollection<RelayLeaseDoc>(db, collection);
  }

  /** The `_id`s of `layout`'s leases: the single relay lease for none stored or one partition. */
  leaseIds(layout: RelayLayout | undefined): string[] {
    if (!layout || layout.partitions === 1) return [this.ids.single.lease];
    return Array.from(
      { length: layout.partitions },
      (_, p) => this.ids.partition(layout.generation, p).lease,
    );
  }

  /**
   * Switches from `expected` to `partitions` (steps 1 to 3); the new layout, or undefined when
   * the stored layout is no longer `expected`, another instance is switching, or a lease of
   * `expected` is valid.
   */
  async switch(
    expected: RelayLayout | undefined,
    partitions: number,
  ): Promise<RelayLayout | undefined> {
    const now = await serverTime(this.db);
    const claim = await this.claim(expected, partitions, now);
    if (!claim) return undefined;
    let committed = false;
    try {
      if (await this.closeLeases(expected, claim.number, now)) {
        committed = await this.commit(expected, claim.token, partitions, now);
      }
    } catch (error) {
      // The compare-and-set may have applied: reopen only after removing the claim, which
      // proves it did not (and now cannot).
      // Best effort: what stays closed is reopened once the claim is stale (`repair`).
      if (await this.release(expected, claim.token).catch(() => false)) {
        await this.reopen(expected, claim.number).catch(() => undefined);
      }
      throw error;
    }
    if (committed) return { partitions, generation: (expected?.generation ?? 0) + 1 };
    // Not switched (a valid lease, or the claim was taken over): nothing this claim or an older
    // one closed is binding. Closings of a newer claim have a higher number and stay.
    await this.reopen(expected, claim.number);
    await this.release(expected, claim.token);
    return undefined;
  }

  /**
   * Run with every read of the layout document: a stale claim is removed, and leases of the
   * stored layout that a claim no longer live left closed are reopened (expired).
   */
  async repair(doc: RelayLayoutDoc | null): Promise<void> {
    if (!doc || !doc.claims) return;
    const layout = storedLayout(doc);
    const live = doc.switching;
    if (live) {
      const now = await serverTime(this.db);
      if (live.at.getTime() > now.getTime() - this.staleMs) {
        // Live: only what older claims closed is void (and the live switcher closes it again).
        return this.reopen(layout, doc.claims - 1);
      }
      if (!(await this.release(layout, live.token))) return; // switched, taken over, released
    }
    await this.reopen(layout, doc.claims);
  }

  private async claim(
    expected: RelayLayout | undefined,
    partitions: number,
    now: Date,
  ): Promise<{ token: string; number: number } | undefined> {
    const generation = expected?.generation ?? 0;
    const switching: SwitchClaim = { token: randomUUID(), at: now, partitions };
    const claimed = await this.layouts.findOneAndUpdate(
      {
        _id: this.ids.layout,
        generation,
        $or: [
          { switching: { $exists: false } },
          { 'switching.at': { $lte: new Date(now.getTime() - this.staleMs) } },
        ],
      },
      { $set: { switching }, $inc: { claims: 1 } },
      { returnDocument: 'after' },
    );
    if (claimed) {
      // Read back: a server that ignores the filter must not let two instances switch.
      if (claimed.switching?.token !== switching.token || typeof claimed.claims !== 'number')
        return undefined;
      return { token: switching.token, number: claimed.claims };
    }
    if (generation !== 0) return undefined;
    // No layout stored and no document yet: create it with the claim (the unique `_id` lets
    // only one instance do so).
    const created = await insertUnlessPresent(this.layouts, {
      _id: this.ids.layout,
      generation: 0,
      claims: 1,
      switching,
    });
    return created ? { token: switching.token, number: 1 } : undefined;
  }

  /** Step 2: true when every lease of `expected` is closed for claim `claim`. */
  private async closeLeases(
    expected: RelayLayout | undefined,
    claim: number,
    now: Date,
  ): Promise<boolean> {
    for (const [partition, id] of this.leaseIds(expected).entries()) {
      const closed = {
        owner: CLOSED_BY_SWITCH,
        expiresAt: LEASE_CLOSED_UNTIL,
        fencing: await this.gate.next(),
        switchClaim: claim,
      };
      // Expired at the server's time (`now` is not later than the time this applies at), or
      // closed by an older claim of this layout (no longer binding).
      const result = await this.leaseDocs.updateOne(
        {
          _id: id,
          $or: [
            { expiresAt: { $lte: now } },
            { owner: CLOSED_BY_SWITCH, switchClaim: { $lt: claim } },
          ],
        },
        { $set: closed },
      );
      if (result.matchedCount === 1) continue;
      // Never taken: create it closed. Present: valid (or closed by a newer claim): give up.
      const doc: RelayLeaseDoc = { _id: id, ...closed, acquiredAt: now };
      if (expected && expected.partitions > 1) doc.partition = partition;
      if (!(await insertUnlessPresent(this.leaseDocs, doc))) return false;
    }
    return true;
  }

  /** Step 3: the layout compare-and-set, under our claim (removed in the same update). */
  private async commit(
    expected: RelayLayout | undefined,
    token: string,
    partitions: number,
    now: Date,
  ): Promise<boolean> {
    const result = await this.layouts.updateOne(
      { _id: this.ids.layout, generation: expected?.generation ?? 0, 'switching.token': token },
      {
        $set: { partitions, generation: (expected?.generation ?? 0) + 1, switchedAt: now },
        $unset: { switching: '' },
      },
    );
    return result.matchedCount === 1;
  }

  /** Removes the claim `token` if it is still the live one of `layout`'s generation. */
  private async release(layout: RelayLayout | undefined, token: string): Promise<boolean> {
    const result = await this.layouts.updateOne(
      { _id: this.ids.layout, generation: layout?.generation ?? 0, 'switching.token': token },
      { $unset: { switching: '' } },
    );
    return result.matchedCount === 1;
  }

  /**
   * Reopens (expired, so free) `layout`'s leases closed by claim `upTo` or an older one. Only
   * called when none of those claims can switch any more: a switch from `layout` closed every
   * lease of it under its own claim before the layout changed, and nothing closes them again
   * after it, so this never reopens a lease of a layout that was switched away.
   */
  private async reopen(layout: RelayLayout | undefined, upTo: number): Promise<void> {
    if (upTo < 1) return;
    const ids = this.leaseIds(layout);
    const closed = await this.leaseDocs
      .find({ _id: { $in: ids }, owner: CLOSED_BY_SWITCH, switchClaim: { $lte: upTo } })
      .toArray();
    for (const doc of closed) {
      await this.leaseDocs.updateOne(
        { _id: doc._id, owner: CLOSED_BY_SWITCH, switchClaim: doc.switchClaim },
        { $set: { expiresAt: new Date(0) } },
      );
    }
  }
}
