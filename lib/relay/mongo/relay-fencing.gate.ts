import type { mongo } from 'mongoose';
import { CLOSED_BY_LAYOUT, LEASE_CLOSED_UNTIL } from '../../documents/relay-state.document';
import type {
  FencingCounterDoc,
  PartitionedRelayIds,
  RelayLeaseDoc,
} from '../../documents/relay-state.document';
import { insertUnlessPresent } from './mongo-relay-state.store';

/**
 * The global fencing counter, and the single relay lease as a gate between layouts.
 *
 * Every fencing number handed out (partition leases; the single lease when a switch to one
 * partition reopens it) is above every number handed out before, in any partition or layout:
 * the counter is raised (`$max`) to the single lease's fencing before a partition lease takes
 * the next number (`$inc`), and the single lease is reopened at a number taken from the counter.
 */
export class RelayFencingGate {
  constructor(
    private readonly state: mongo.Collection<RelayLeaseDoc & FencingCounterDoc>,
    private readonly ids: PartitionedRelayIds,
  ) {}

  /** The next fencing number, above every one given so far (the single lease's included). */
  async next(): Promise<number> {
    const single = await this.state.findOne({ _id: this.ids.single.lease });
    if (typeof single?.fencing === 'number') {
      await this.state.updateOne(
        { _id: this.ids.fencing },
        { $max: { value: single.fencing } },
        { upsert: true },
      );
    }
    const counter = await this.state.findOneAndUpdate(
      { _id: this.ids.fencing },
      { $inc: { value: 1 } },
      { upsert: true, returnDocument: 'after' },
    );
    if (typeof counter?.value !== 'number') throw new Error('the fencing counter was not written');
    return counter.value;
  }

  /**
   * Closes the single relay lease for layout `generation` (several partitions): held by
   * `CLOSED_BY_LAYOUT` until the year 9999, so a relay that knows only the single lease (an
   * older version) can neither take nor renew it. Idempotent; a gate already set by a newer
   * generation is left alone (the conditional upsert then hits the unique `_id`).
   */
  async close(generation: number): Promise<void> {
    await this.setGate(generation, { owner: CLOSED_BY_LAYOUT, expiresAt: LEASE_CLOSED_UNTIL });
  }

  /**
   * Opens the single relay lease again for layout `generation` (one partition): free (expired),
   * at a fencing number above every one given so far, so the next single leader's number
   * (`$inc` on the lease) is above them too.
   */
  async reopen(generation: number): Promise<void> {
    const fencing = await this.next();
    await this.setGate(generation, { owner: '', expiresAt: new Date(0), fencing });
  }

  private async setGate(
    generation: number,
    fields: { owner: string; expiresAt: Date; fencing?: number },
  ): Promise<void> {
    const fresh = { ...fields, layoutGeneration: generation };
    const result = await this.state.updateOne(
      {
        _id: this.ids.single.lease,
        $or: [{ layoutGeneration: { $lt: generation } }, { layoutGeneration: { $exists: false } }],
      },
      { $set: fresh },
    );
    if (result.matchedCount === 1) return;
    // Not matched: no single lease yet (create it so), or one set by this generation or a newer
    // one already (the insert hits the unique `_id`: leave it).
    await insertUnlessPresent(this.state, { _id: this.ids.single.lease, ...fresh });
  }
}
