import type { mongo } from 'mongoose';
import type { PartitionedRelayIds } from '../../documents/relay-state.document';
import type { LeaseGrant } from '../ports/relay-state.store';
import { insertUnlessPresent, MongoRelayStateStore } from './mongo-relay-state.store';
import type { RelayFencingGate } from './relay-fencing.gate';

/**
 * One partition's lease and checkpoint (`lease:<name>:g<generation>:p<partition>`,
 * `checkpoint:...`). Renewal, release and the fenced checkpoint are the single relay's
 * (`MongoRelayStateStore`); taking the lease differs:
 * - the fencing number comes from the global counter (`RelayFencingGate.next`), and the lease
 *   is only taken at a number above the one stored on it, so it only goes up;
 * - before that, the single relay lease is closed for this layout (idempotent: it repairs a
 *   switch that stopped half-way), so no relay of an older version publishes next to us;
 * - after it, the stored layout is read again: a lease taken for a layout that was switched
 *   away in the meantime is given back at once (undefined).
 */
export class MongoPartitionStateStore extends MongoRelayStateStore {
  constructor(
    db: mongo.Db,
    collection: string,
    private readonly ids: PartitionedRelayIds,
    private readonly gate: RelayFencingGate,
    private readonly generation: number,
    private readonly partition: number,
    private readonly partitions: number,
  ) {
    super(db, collection, ids.partition(generation, partition));
  }

  override async acquireLease(
    owner: string,
    serverNow: Date,
    expiresAt: Date,
  ): Promise<LeaseGrant | undefined> {
    await this.gate.close(this.generation);
    const fencing = await this.gate.next();
    const fields = {
      owner,
      fencing,
      expiresAt,
      acquiredAt: serverNow,
      partition: this.partition,
      partitions: this.partitions,
      generation: this.generation,
    };
    // A conditional update, else an insert (the unique `_id` refuses it when the lease exists):
    // free or ours, and only ever at a higher fencing number.
    const taken = await this.state.findOneAndUpdate(
      {
        _id: this.leaseId,
        $and: [
          { $or: [{ owner }, { expiresAt: { $lte: serverNow } }] },
          { $or: [{ fencing: { $lt: fencing } }, { fencing: { $exists: false } }] },
        ],
      },
      { $set: fields },
      { returnDocument: 'after' },
    );
    if (!taken && !(await insertUnlessPresent(this.state, { _id: this.leaseId, ...fields }))) {
      return undefined; // held by another instance
    }
    // Read back (a server that ignores the condition must not make two owners), then check
    // the layout is still the one this lease belongs to.
    if (!(await this.holdsLease(owner, fencing))) return undefined;
    const layout = await this.state.findOne({ _id: this.ids.layout });
    if ((layout as { generation?: number } | null)?.generation !== this.generation) {
      await this.releaseLease(owner, fencing);
      return undefined;
    }
    return { owner, fencing, expiresAt };
  }
}
