import { mongo } from 'mongoose';
import type { ResumeToken } from '../ports/change-source';
import type { LeaseGrant, RelayStateStore, StoredCheckpoint } from '../ports/relay-state.store';
import { relayCollection } from './relay-collections';
import { relayStateIds } from './stored-checkpoint.reader';

export interface StateDoc {
  _id: string;
  owner?: string;
  fencing?: number;
  expiresAt?: Date;
  acquiredAt?: Date;
  token?: unknown;
  savedAt?: Date;
}

const DUPLICATE_KEY = 11000;

export function isDuplicateKey(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === DUPLICATE_KEY;
}

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
    if (isDuplicateKey(error)) return false;
    throw error;
  }
}

/**
 * The lease and checkpoint documents in `collections.relayState` (`lease:<name>`,
 * `checkpoint:<name>`). Conditional upserts fence them: when the condition does not match
 * because another instance holds the document, the upsert's insert hits the unique `_id`
 * (duplicate key), so nothing is written.
 */
export class MongoRelayStateStore implements RelayStateStore {
  protected readonly state: mongo.Collection<StateDoc>;
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
    this.state = relayCollection<StateDoc>(db, collection);
    const ids = typeof relay === 'string' ? relayStateIds(relay) : relay;
    this.leaseId = ids.lease;
    this.checkpointId = ids.checkpoint;
  }

  /**
   * `hello.localTime` of the primary: "the local server time in UTC"
   * (https://www.mongodb.com/docs/manual/reference/command/hello/#mongodb-data-hello.localTime).
   */
  async serverTime(): Promise<Date> {
    const hello = await this.db.command(
      { hello: 1 },
      { readPreference: mongo.ReadPreference.primary },
    );
    const time = hello.localTime as unknown;
    if (!(time instanceof Date))
      throw new Error('the server did not report its time (hello.localTime)');
    return time;
  }

  async acquireLease(
    owner: string,
    serverNow: Date,
    expiresAt: Date,
  ): Promise<LeaseGrant | undefined> {
    try {
      const doc = await this.state.findOneAndUpdate(
        { _id: this.leaseId, $or: [{ owner }, { expiresAt: { $lte: serverNow } }] },
        { $set: { owner, expiresAt, acquiredAt: serverNow }, $inc: { fencing: 1 } },
        { upsert: true, returnDocument: 'after' },
      );
      if (!doc || doc.owner !== owner || typeof doc.fencing !== 'number') return undefined;
      // Read it back: a server that does not honour the conditional upsert must not make two leaders.
      if (!(await this.holdsLease(owner, doc.fencing))) return undefined;
      return { owner, fencing: doc.fencing, expiresAt };
    } catch (error) {
      if (isDuplicateKey(error)) return undefined; // held by another instance
      throw error;
    }
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
    try {
      const doc = await this.state.findOneAndUpdate(
        { _id: this.checkpointId, ...this.notNewerThan(fencing) },
        { $set: { fencing } },
        { upsert: true, returnDocument: 'after' },
      );
      if (!doc || doc.fencing !== fencing) return undefined;
      return {
        token: doc.token === null ? undefined : (doc.token as ResumeToken | undefined),
        savedAt: doc.savedAt,
      };
    } catch (error) {
      if (isDuplicateKey(error)) return undefined;
      throw error;
    }
  }

  saveCheckpoint(token: ResumeToken, fencing: number, at: Date): Promise<boolean> {
    return this.writeCheckpoint(fencing, { $set: { token, fencing, savedAt: at } });
  }

  clearCheckpoint(fencing: number, at: Date): Promise<boolean> {
    return this.writeCheckpoint(fencing, { $set: { fencing, savedAt: at }, $unset: { token: '' } });
  }

  private notNewerThan(fencing: number): mongo.Filter<StateDoc> {
    return { $or: [{ fencing: { $lte: fencing } }, { fencing: { $exists: false } }] };
  }

  private async writeCheckpoint(
    fencing: number,
    update: mongo.UpdateFilter<StateDoc>,
  ): Promise<boolean> {
    try {
      await this.state.updateOne(
        { _id: this.checkpointId, ...this.notNewerThan(fencing) },
        update,
        {
          upsert: true,
        },
      );
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }
}
