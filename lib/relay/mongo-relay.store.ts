import { Logger } from '@nestjs/common';
import type { mongo } from 'mongoose';
import type { OutboxEventRecord } from '../common/envelope';
import type { LeaseGrant } from './lease.tracker';
import { AGGREGATE_ORDER } from './relay.store';
import type {
  AggregateRef,
  DeadLetterRecord,
  FailureRecord,
  OutboxRelayStore,
  PendingState,
  RelayStateStore,
} from './relay.store';

/** One entry of an outbox document's `errorHistory` (the last 20 are kept). */
export interface PublishErrorEntry {
  at: Date;
  attempt: number;
  error: string;
}

type OutboxDoc = OutboxEventRecord & { errorHistory?: PublishErrorEntry[] };

/** A document of the dead-letter collection. */
export interface OutboxDeadLetter extends Omit<OutboxEventRecord, '_id' | 'status'> {
  /** `_id` of the event in the outbox collection. */
  outboxId: unknown;
  reason: DeadLetterRecord['reason'];
  errors: PublishErrorEntry[];
  deadLetteredAt: Date;
}

interface StateDoc {
  _id: string;
  owner?: string;
  fencing?: number;
  expiresAt?: Date;
  acquiredAt?: Date;
  token?: unknown;
  savedAt?: Date;
}

const ERROR_HISTORY = 20;
const DUPLICATE_KEY = 11000;
const INDEX_OPTIONS_CONFLICT = 85;
const INDEX_KEY_SPECS_CONFLICT = 86;

/**
 * Keyset condition "after `last`" in the drain's order (aggregateType, aggregateId, sequence,
 * _id), where a missing `sequence` sorts before any number, as in MongoDB.
 */
function afterInDrainOrder(last: OutboxEventRecord): mongo.Filter<OutboxDoc> {
  const { aggregateType, aggregateId, sequence, _id } = last;
  const later =
    typeof sequence === 'number'
      ? [{ sequence: { $gt: sequence } }, { sequence, _id: { $gt: _id } }]
      : [{ sequence: { $exists: true } }, { sequence: { $exists: false }, _id: { $gt: _id } }];
  return {
    $or: [
      { aggregateType: { $gt: aggregateType } },
      { aggregateType, aggregateId: { $gt: aggregateId } },
      { aggregateType, aggregateId, $or: later },
    ],
  } as mongo.Filter<OutboxDoc>;
}

function code(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}

/**
 * The relay's MongoDB access, through the native driver of the app's connection:
 * outbox reads/updates, dead letters, checkpoint and lease (`relayState`).
 */
export class MongoRelayStore implements OutboxRelayStore, RelayStateStore {
  private readonly logger = new Logger('OutboxRelay');
  private readonly outbox: mongo.Collection<OutboxDoc>;
  private readonly deadLetters: mongo.Collection<OutboxDeadLetter>;
  private readonly state: mongo.Collection<StateDoc>;
  private readonly leaseId: string;
  private readonly checkpointId: string;

  constructor(
    db: mongo.Db,
    names: { outbox: string; deadLetters: string; relayState: string },
    relayName: string,
  ) {
    this.outbox = db.collection<OutboxDoc>(names.outbox);
    this.deadLetters = db.collection<OutboxDeadLetter>(names.deadLetters);
    this.state = db.collection<StateDoc>(names.relayState);
    this.leaseId = `lease:${relayName}`;
    this.checkpointId = `checkpoint:${relayName}`;
  }

  get outboxCollection(): mongo.Collection<OutboxDoc> {
    return this.outbox;
  }

  /**
   * The relay's indexes: pending pages, per-aggregate catch-up, retries, and the retention TTL
   * on `publishedAt` (pending events have none, so cleanup never removes them).
   */
  async ensureIndexes(retentionSeconds: number): Promise<void> {
    const attempts: Array<[string, () => Promise<unknown>]> = [
      [
        'outbox_relay_pending',
        () => this.outbox.createIndex({ status: 1, _id: 1 }, { name: 'outbox_relay_pending' }),
      ],
      [
        'outbox_relay_aggregate_order',
        () =>
          this.outbox.createIndex(
            { aggregateType: 1, aggregateId: 1, ...AGGREGATE_ORDER },
            {
              name: 'outbox_relay_aggregate_order',
              partialFilterExpression: { status: 'pending' },
            },
          ),
      ],
      [
        'outbox_relay_retry',
        () =>
          this.outbox.createIndex(
            { nextAttemptAt: 1 },
            {
              name: 'outbox_relay_retry',
              partialFilterExpression: { status: 'pending', nextAttemptAt: { $exists: true } },
            },
          ),
      ],
      ['outbox_relay_retention', () => this.ensureRetentionIndex(retentionSeconds)],
      [
        'outbox_dead_letter_event_id',
        () =>
          this.deadLetters.createIndex(
            { eventId: 1 },
            { name: 'outbox_dead_letter_event_id', unique: true },
          ),
      ],
    ];
    for (const [name, create] of attempts) {
      try {
        await create();
      } catch (error) {
        this.logger.error(
          `Could not create index ${name}: ${(error as Error).message}. The relay works without it, more slowly` +
            (name === 'outbox_relay_retention'
              ? ', and published events are not cleaned up.'
              : '.'),
        );
      }
    }
  }

  private async ensureRetentionIndex(retentionSeconds: number): Promise<void> {
    try {
      await this.outbox.createIndex(
        { publishedAt: 1 },
        { name: 'outbox_relay_retention', expireAfterSeconds: retentionSeconds },
      );
    } catch (error) {
      const c = code(error);
      if (c !== INDEX_OPTIONS_CONFLICT && c !== INDEX_KEY_SPECS_CONFLICT) throw error;
      // The retention changed since the index was created: update it in place.
      await this.outbox.db.command({
        collMod: this.outbox.collectionName,
        index: { name: 'outbox_relay_retention', expireAfterSeconds: retentionSeconds },
      });
    }
  }

  findPendingState(ids: readonly unknown[]): Promise<PendingState[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.outbox
      .find(
        { _id: { $in: ids as never[] }, status: 'pending' },
        { projection: { payload: 0, headers: 0 } },
      )
      .toArray();
  }

  findPendingOfAggregate(ref: AggregateRef, limit: number): Promise<OutboxEventRecord[]> {
    return this.outbox
      .find({ aggregateType: ref.aggregateType, aggregateId: ref.aggregateId, status: 'pending' })
      .sort(AGGREGATE_ORDER)
      .limit(limit)
      .toArray();
  }

  findPendingPage(
    after: OutboxEventRecord | undefined,
    until: Date,
    limit: number,
  ): Promise<OutboxEventRecord[]> {
    return this.outbox
      .find({
        status: 'pending',
        occurredAt: { $lte: until },
        ...(after ? afterInDrainOrder(after) : {}),
      })
      .sort({ aggregateType: 1, aggregateId: 1, ...AGGREGATE_ORDER })
      .limit(limit)
      .toArray();
  }

  async findRetryingAggregates(limit: number): Promise<Array<AggregateRef & { retryAt: Date }>> {
    const rows = await this.outbox
      .aggregate<{ _id: AggregateRef; retryAt: Date }>([
        { $match: { status: 'pending', nextAttemptAt: { $exists: true } } },
        {
          $group: {
            _id: { aggregateType: '$aggregateType', aggregateId: '$aggregateId' },
            retryAt: { $min: '$nextAttemptAt' },
          },
        },
        { $limit: limit },
      ])
      .toArray();
    return rows.map((row) => ({ ...row._id, retryAt: row.retryAt }));
  }

  async findStaleAggregates(before: Date, now: Date, limit: number): Promise<AggregateRef[]> {
    const docs = await this.outbox
      .find(
        {
          status: 'pending',
          occurredAt: { $lt: before },
          $or: [{ nextAttemptAt: { $exists: false } }, { nextAttemptAt: { $lte: now } }],
        },
        { projection: { aggregateType: 1, aggregateId: 1 } },
      )
      .sort({ _id: 1 })
      .limit(limit * 4)
      .toArray();
    const seen = new Map<string, AggregateRef>();
    for (const doc of docs) {
      const key = `${doc.aggregateType}\u0000${doc.aggregateId}`;
      if (!seen.has(key))
        seen.set(key, { aggregateType: doc.aggregateType, aggregateId: doc.aggregateId });
      if (seen.size >= limit) break;
    }
    return [...seen.values()];
  }

  async markPublished(ids: readonly unknown[], at: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.outbox.updateMany(
      { _id: { $in: ids as never[] }, status: 'pending' },
      { $set: { status: 'published', publishedAt: at }, $unset: { nextAttemptAt: '' } },
    );
  }

  async recordFailure(event: OutboxEventRecord, failure: FailureRecord): Promise<void> {
    await this.outbox.updateOne(
      { _id: event._id, status: 'pending' },
      {
        $set: {
          attempts: failure.attempts,
          nextAttemptAt: failure.nextAttemptAt,
          lastError: failure.error,
        },
        $push: {
          errorHistory: {
            $each: [{ at: failure.at, attempt: failure.attempts, error: failure.error }],
            $slice: -ERROR_HISTORY,
          },
        },
      },
    );
  }

  async deadLetter(event: OutboxEventRecord, record: DeadLetterRecord): Promise<void> {
    const { _id, status: _status, errorHistory, ...rest } = event as OutboxDoc;
    const errors = [
      ...(errorHistory ?? []),
      { at: record.at, attempt: record.attempts, error: record.error },
    ];
    await this.deadLetters.updateOne(
      { eventId: event.eventId },
      {
        $setOnInsert: { ...rest, outboxId: _id },
        $set: {
          reason: record.reason,
          attempts: record.attempts,
          lastError: record.error,
          errors,
          deadLetteredAt: record.at,
        },
      },
      { upsert: true },
    );
    await this.outbox.deleteOne({ _id, status: 'pending' });
  }

  async pendingStats(): Promise<{ count: number; oldestOccurredAt?: Date }> {
    const count = await this.outbox.countDocuments({ status: 'pending' });
    if (count === 0) return { count };
    const oldest = await this.outbox.findOne(
      { status: 'pending' },
      { sort: { _id: 1 }, projection: { occurredAt: 1 } },
    );
    return { count, oldestOccurredAt: oldest?.occurredAt };
  }

  // ------------------------------------------------------------ lease + checkpoint

  async acquireLease(owner: string, expiresAt: Date, now: Date): Promise<LeaseGrant | undefined> {
    try {
      const doc = await this.state.findOneAndUpdate(
        { _id: this.leaseId, $or: [{ owner }, { expiresAt: { $lte: now } }] },
        { $set: { owner, expiresAt, acquiredAt: now }, $inc: { fencing: 1 } },
        { upsert: true, returnDocument: 'after' },
      );
      if (!doc || doc.owner !== owner || typeof doc.fencing !== 'number') return undefined;
      // Read it back: a server that does not honour the conditional upsert must not make two leaders.
      if (!(await this.holdsLease(owner, doc.fencing))) return undefined;
      return { owner, fencing: doc.fencing, expiresAt };
    } catch (error) {
      if (code(error) === DUPLICATE_KEY) return undefined; // held by another instance
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

  private async holdsLease(owner: string, fencing: number): Promise<boolean> {
    const current = await this.state.findOne({ _id: this.leaseId });
    return current?.owner === owner && current.fencing === fencing;
  }

  async releaseLease(owner: string, fencing: number): Promise<void> {
    await this.state.updateOne(
      { _id: this.leaseId, owner, fencing },
      { $set: { expiresAt: new Date(0) } },
    );
  }

  async loadCheckpoint(): Promise<{ token: unknown; savedAt: Date } | undefined> {
    const doc = await this.state.findOne({ _id: this.checkpointId });
    if (!doc || doc.token === undefined || doc.token === null) return undefined;
    return { token: doc.token, savedAt: doc.savedAt ?? new Date(0) };
  }

  async saveCheckpoint(token: unknown, fencing: number, at: Date): Promise<boolean> {
    return this.writeCheckpoint(fencing, { $set: { token, fencing, savedAt: at } });
  }

  async clearCheckpoint(fencing: number): Promise<void> {
    await this.writeCheckpoint(fencing, {
      $set: { fencing, savedAt: new Date() },
      $unset: { token: '' },
    });
  }

  /** Fenced write: only if no newer leader wrote (a stale leader's upsert hits the unique _id). */
  private async writeCheckpoint(
    fencing: number,
    update: mongo.UpdateFilter<StateDoc>,
  ): Promise<boolean> {
    try {
      await this.state.updateOne(
        {
          _id: this.checkpointId,
          $or: [{ fencing: { $lte: fencing } }, { fencing: { $exists: false } }],
        },
        update,
        { upsert: true },
      );
      return true;
    } catch (error) {
      if (code(error) === DUPLICATE_KEY) return false;
      throw error;
    }
  }
}
