import type { OutboxEventRecord } from '../../../lib/documents/outbox-event.document';
import { eventSlot } from '../../../lib/events/event-slot';
import type {
  AggregateRef,
  DeadLetterRecord,
  DueAggregate,
  FailureRecord,
  MarkedDead,
  OutboxRelayStore,
  PendingState,
  RelayFence,
  ScheduledStats,
  StaleEvent,
} from '../../../lib/relay/ports/outbox-relay.store';
import type { SlotRange } from '../../../lib/relay/ports/partition-layout';
import { withOlderUnslotted } from '../../../lib/relay/ports/unslotted-in-page';
import { SIM_EPOCH_MS } from '../process/sim-process';
import type { SimHistory, StoreOpFact } from '../world/sim.history';
import type { LandedWrite, SimDatabase } from './sim-database';
import type { DbOpSpec, SimMongoConnection } from './sim-mongo.connection';

/**
 * The slot backfill (`stampMissingSlots` of the Mongo partition ports and partition stores):
 * pending and dead-marked events written without a slot get their aggregate's; returns how
 * many it found.
 */
export function stampMissingSlotsOp(
  connection: SimMongoConnection,
  db: SimDatabase,
  history: SimHistory,
  limit: number,
  /** A tenant database's outbox (undefined: the app database's). */
  database?: string,
): Promise<number> {
  return connection.op({ name: 'stampMissingSlots', write: false }, () => {
    const stamped = db.inTenantDatabase(database, () =>
      db.stampMissingSlots(limit, (doc) => eventSlot(doc.aggregateType, doc.aggregateId)),
    );
    if (stamped.length > 0) history.note(`slots stamped on ${stamped.length} event(s)`);
    return stamped.length;
  });
}

/** Records outbox documents a read answered to the relay (`PortFlowFact` 'handed'). */
export function recordHanded(
  history: SimHistory,
  connection: SimMongoConnection,
  via: 'stream' | 'drain' | 'catch-up',
  records: readonly OutboxEventRecord[],
  servedAt: number,
  issuedAt: number,
): void {
  if (records.length === 0) return;
  history.portFlow.push({
    kind: 'handed',
    at: connection.now(),
    owner: connection.owner,
    via,
    docs: records.map((record) => ({
      docId: String(record._id),
      retryAt: record.nextAttemptAt ? new Date(record.nextAttemptAt).getTime() : undefined,
      availableAt: record.availableAt
        ? new Date(record.availableAt).getTime() - SIM_EPOCH_MS
        : undefined,
    })),
    relayNow: connection.callerNow(),
    servedAt,
    issuedAt,
  });
}

/** `OutboxRelayStore` over the simulated database (majority reads, fenced writes). */
export class SimOutboxStore implements OutboxRelayStore {
  /** A partition's store only, as on MongoDB. */
  readonly stampMissingSlots?: (limit: number) => Promise<number>;

  constructor(
    private readonly connection: SimMongoConnection,
    private readonly db: SimDatabase,
    private readonly history: SimHistory,
    /** A partition's scope: reads see only its slot range, writes are made under its lease. */
    private readonly partition?: { range: SlotRange; leaseScope: string },
    /** A tenant database's outbox (undefined: the app database's, as without tenants). */
    private readonly database?: string,
  ) {
    if (partition) {
      this.stampMissingSlots = (limit) =>
        stampMissingSlotsOp(connection, db, history, limit, database);
    }
  }

  /** By `_id`: the same with or without a partition's range (as the adapter). */
  findPendingState(ids: readonly unknown[]): Promise<PendingState[]> {
    const checked = (states: PendingState[]): void => {
      this.history.portFlow.push({
        kind: 'states',
        at: this.connection.now(),
        owner: this.connection.owner,
        asked: ids.map(String),
        pending: states.map((state) => ({
          docId: String(state._id),
          retryAt: state.nextAttemptAt ? new Date(state.nextAttemptAt).getTime() : undefined,
        })),
      });
    };
    // A failed check drops the stream's batch (it is read again): as if none were pending.
    return this.connection.op(
      {
        name: 'findPendingState',
        write: false,
        onAnswer: checked,
        onFailure: () => checked([]),
      },
      () => this.inDatabase(() => this.db.scoped(undefined, () => this.db.findPendingState(ids))),
    );
  }

  /** By aggregate: the same with or without a partition's range (as the adapter). */
  findPendingOfAggregates(
    refs: readonly AggregateRef[],
    limit: number,
    dueBy?: Date,
  ): Promise<OutboxEventRecord[]> {
    let servedAt = 0;
    const issuedAt = this.connection.now();
    return this.read(
      'findPendingOfAggregates',
      () => {
        servedAt = this.db.now;
        return this.db.findPendingOfAggregates(refs, limit, dueBy);
      },
      false,
      (records) => this.handed('catch-up', records, servedAt, issuedAt),
    );
  }

  /** The simulated server's clock (as `hello.localTime`), read when the operation applies. */
  serverTime(): Promise<Date> {
    return this.connection.op({ name: 'serverTime', write: false }, () => this.db.serverDate());
  }

  /** The simulated majority commit point as a time (`SimDatabase.majorityDate`), when it applies. */
  majorityTime(): Promise<Date> {
    return this.connection.op({ name: 'majorityTime', write: false }, () => this.db.majorityDate());
  }

  /** The no-op majority write (`SimDatabase.majorityWriteTime`): a clock document, not fenced. */
  majorityWriteTime(): Promise<Date> {
    return this.connection.request<Date>({ name: 'majorityWriteTime', write: false }, (respond) =>
      this.db.majorityWriteTime(respond),
    );
  }

  findDueAggregates(dueBy: Date, limit: number, marked: boolean): Promise<DueAggregate[]> {
    return this.read('findDueAggregates', () => this.db.findDueAggregates(dueBy, limit, marked));
  }

  nextDueAt(after?: Date): Promise<Date | undefined> {
    return this.read('nextDueAt', () => this.db.nextDueAt(after));
  }

  scheduledStats(now: Date): Promise<ScheduledStats> {
    return this.read('scheduledStats', () => this.db.scheduledStats(now));
  }

  findPendingPage(
    after: OutboxEventRecord | undefined,
    limit: number,
  ): Promise<OutboxEventRecord[]> {
    // A partition's page as the adapter makes it from its one read (`MongoOutboxRelayStore`).
    const page = (read: OutboxEventRecord[]) =>
      this.partition ? withOlderUnslotted(read, limit) : read;
    let servedAt = 0;
    const issuedAt = this.connection.now();
    return this.read(
      'findPendingPage',
      () => {
        servedAt = this.db.now;
        return page(this.db.findPendingPage(after, limit));
      },
      true,
      (records) => this.handed('drain', records, servedAt, issuedAt),
    );
  }

  findRetryingAggregates(
    after: AggregateRef | undefined,
    limit: number,
  ): Promise<Array<AggregateRef & { retryAt: Date }>> {
    return this.read('findRetryingAggregates', () => this.db.findRetryingAggregates(after, limit));
  }

  findStaleEvents(
    afterId: unknown,
    olderThan: Date,
    dueBy: Date,
    limit: number,
  ): Promise<StaleEvent[]> {
    return this.read('findStaleEvents', () =>
      this.db.findStaleEvents(afterId, olderThan, dueBy, limit),
    );
  }

  /** Whether a pending event is there, scheduled ones too (`MongoTenantPorts.hasPending`'s count). */
  hasPending(): Promise<boolean> {
    return this.read('hasPending', () => this.db.hasPending());
  }

  pendingStats(): Promise<{ count: number; oldestOccurredAt?: Date }> {
    return this.read('pendingStats', () => this.db.pendingStats());
  }

  findMarkedDead(limit: number): Promise<MarkedDead[]> {
    return this.read('findMarkedDead', () => this.db.findMarkedDead(limit));
  }

  markPublished(ids: readonly unknown[], at: Date, fence: RelayFence): Promise<void> {
    return this.write({ name: 'markPublished', write: true, fence, ids }, () =>
      this.db.markPublished(ids, at, fence),
    );
  }

  markHeld(ids: readonly unknown[], retryAt: Date, fence: RelayFence): Promise<void> {
    return this.write({ name: 'markHeld', write: true, fence, ids }, () =>
      this.db.markHeld(ids, retryAt, fence),
    );
  }

  recordFailure(
    event: OutboxEventRecord,
    failure: FailureRecord,
    fence: RelayFence,
  ): Promise<void> {
    return this.write({ name: 'recordFailure', write: true, fence, ids: [event._id] }, () =>
      this.db.recordFailure(event, failure, fence),
    );
  }

  markDead(event: OutboxEventRecord, record: DeadLetterRecord, fence: RelayFence): Promise<void> {
    return this.write({ name: 'markDead', write: true, fence, ids: [event._id] }, () =>
      this.db.markDead(event, record, fence),
    );
  }

  copyToDeadLetters(event: MarkedDead): Promise<void> {
    return this.connection.op(
      {
        name: 'copyToDeadLetters',
        write: true,
        ids: [event._id],
        leaseScope: this.partition?.leaseScope,
      },
      () => this.inDatabase(() => this.db.copyToDeadLetters(event)),
    );
  }

  removeDead(id: unknown, fence: RelayFence): Promise<void> {
    return this.write({ name: 'removeDead', write: true, fence, ids: [id] }, () =>
      this.db.removeDead(id, fence),
    );
  }

  /** Records what a read handed to the relay (see `PortFlowFact`), as it reaches the relay. */
  private handed(
    via: 'drain' | 'catch-up',
    records: OutboxEventRecord[],
    servedAt: number,
    issuedAt: number,
  ): void {
    recordHanded(this.history, this.connection, via, records, servedAt, issuedAt);
  }

  /** A read; `scoped`: a scan, limited to the partition's slot range. */
  private read<T>(
    name: string,
    apply: () => T,
    scoped = true,
    onAnswer?: (value: T) => void,
  ): Promise<T> {
    const range = scoped ? this.partition?.range : undefined;
    return this.connection.op({ name, write: false, onAnswer }, () =>
      this.inDatabase(() => this.db.scoped(range, apply)),
    );
  }

  private inDatabase<T>(fn: () => T): T {
    return this.db.inTenantDatabase(this.database, fn);
  }

  private write(spec: DbOpSpec & { fence: RelayFence }, apply: () => LandedWrite[]): Promise<void> {
    const scoped = { ...spec, leaseScope: this.partition?.leaseScope };
    this.history.portFlow.push({
      kind: 'written',
      at: this.connection.now(),
      owner: this.connection.owner,
      name: spec.name,
      docIds: (spec.ids ?? []).map(String),
    });
    return this.connection.op(scoped, (fact: StoreOpFact) => {
      for (const landed of this.inDatabase(apply)) {
        this.history.outboxWrites.push({
          at: this.db.now,
          node: fact.node,
          opId: fact.opId,
          docId: landed.key,
          name: spec.name,
          fence: spec.fence,
          stampBefore: landed.stampBefore,
        });
      }
    });
  }
}
