import { mongo } from 'mongoose';
import { relayStateIds, type RelayStateDoc } from '../../documents/relay-state.document';
import type { ResumeToken } from '../ports/change-source';
import type { LeaseGrant, RelayStateStore, StoredCheckpoint } from '../ports/relay-state.store';
import { relayCollection, serverTime } from './relay-collections';

/**
 * Inserts `doc` unless a document with its `_id` exists; false when one does. With an update
 * without upsert before it, this is a conditional upsert that relies on nothing but the unique
 * `_id` (a server that applies a conditional upsert whose condition does not match, as PoppyDB
 * does, cannot make two owners this way).
 */
export async function insertUnlessPresent<T extends { _id: string }>(
  collection: mongo.Collection<T>,
  doc: T,
): Promise<boolean> {
  try {
    await collection.insertOne(doc as mongo.OptionalUnlessRequiredId<T>);
    return true;
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 11000) return false; // duplicate key
    throw error;
  }
}

/** A checkpoint document as read (a `null` token is none). */
export function storedCheckpoint(doc: { token?: unknown; savedAt?: Date }): StoredCheckpoint {
  return { token: doc.token === null ? undefined : doc.token, savedAt: doc.savedAt };
}

/**
 * The lease and checkpoint documents in `collections.relayState` (`lease:<name>`,
 * `checkpoint:<name>`). Conditional writes fence them: an update whose condition (free, ours,
 * not newer) must match, else an insert that the unique `_id` refuses when the document
 * exists, so nothing is written where another instance holds the document.
 */
export class MongoRelayStateStore implements RelayStateStore {
  protected readonly state: mongo.Collection<RelayStateDoc>;
  protected readonly leaseId: string;
  private readonly checkpointId: string;

  /**
   * `relay`: the relay's name (its single lease and checkpoint), or the `_id`s of another
   * lease/checkpoint pair (one relay partition's).
   */
  constructor(
    protected readonly db: mongo.Db,
    collection: string,
    relay: string | { lease: string; checkpoint: string },
  ) {
    this.state = relayCollection<RelayStateDoc>(db, collection);
    const ids = typeof relay === 'string' ? relayStateIds(relay) : relay;
    this.leaseId = ids.lease;
    this.checkpointId = ids.checkpoint;
  }

  serverTime(): Promise<Date> {
    return serverTime(this.db);
  }

  async acquireLease(
    owner: string,
    serverNow: Date,
    expiresAt: Date,
  ): Promise<LeaseGrant | undefined> {
    // Free or ours: take it (fencing + 1); none yet: create it (the unique `_id` refuses a
    // second creation); else another instance holds it.
    const taken = await this.state.findOneAndUpdate(
      { _id: this.leaseId, $or: [{ owner }, { expiresAt: { $lte: serverNow } }] },
      { $set: { owner, expiresAt, acquiredAt: serverNow }, $inc: { fencing: 1 } },
      { returnDocument: 'after' },
    );
    let fencing = taken?.owner === owner ? taken.fencing : undefined;
    if (!taken) {
      const created = { _id: this.leaseId, owner, expiresAt, acquiredAt: serverNow, fencing: 1 };
      if (await insertUnlessPresent(this.state, created)) fencing = 1;
    }
    if (typeof fencing !== 'number') return undefined;
    // Read it back: a server that does not honour the condition must not make two leaders.
    if (!(await this.holdsLease(owner, fencing))) return undefined;
    return { owner, fencing, expiresAt };
  }

  async renewLease(owner: string, fencing: number, expiresAt: Date): Promise<boolean> {
    const result = await this.state.updateOne(
      { _id: this.leaseId, owner, fencing },
      { $set: { expiresAt } },
    );
    return result.matchedCount === 1 && (await this.holdsLease(owner, fencing));
  }

  async releaseLease(owner: string, fencing: number): Promise<void> {
    await this.state.updateOne(
      { _id: this.leaseId, owner, fencing },
      { $set: { expiresAt: new Date(0) } },
    );
  }

  protected async holdsLease(owner: string, fencing: number): Promise<boolean> {
    const current = await this.state.findOne({ _id: this.leaseId });
    return current?.owner === owner && current.fencing === fencing;
  }

  async claimCheckpoint(fencing: number): Promise<StoredCheckpoint | undefined> {
    const doc = await this.state.findOneAndUpdate(
      { _id: this.checkpointId, ...this.notNewerThan(fencing) },
      { $set: { fencing } },
      { returnDocument: 'after' },
    );
    if (!doc) {
      // None yet: create it; present (a newer leader stamped it): not ours.
      const created = await insertUnlessPresent(this.state, { _id: this.checkpointId, fencing });
      return created ? { token: undefined, savedAt: undefined } : undefined;
    }
    return doc.fencing === fencing ? storedCheckpoint(doc) : undefined;
  }

  saveCheckpoint(token: ResumeToken, fencing: number, at: Date): Promise<boolean> {
    return this.writeCheckpoint(fencing, { $set: { token, fencing, savedAt: at } });
  }

  clearCheckpoint(fencing: number, at: Date): Promise<boolean> {
    return this.writeCheckpoint(fencing, { $set: { fencing, savedAt: at }, $unset: { token: '' } });
  }

  private notNewerThan(fencing: number): mongo.Filter<RelayStateDoc> {
    return { $or: [{ fencing: { $lte: fencing } }, { fencing: { $exists: false } }] };
  }

  private async writeCheckpoint(
    fencing: number,
    update: { $set: Partial<RelayStateDoc>; $unset?: Record<string, ''> },
  ): Promise<boolean> {
    const result = await this.state.updateOne(
      { _id: this.checkpointId, ...this.notNewerThan(fencing) },
      update,
    );
    if (result.matchedCount === 1) return true;
    // None yet: create it; present (a newer leader stamped it): fenced off.
    return insertUnlessPresent(this.state, { _id: this.checkpointId, ...update.$set });
  }
}
