import {
  compareAggregates,
  inDrainOrder,
  type OutboxEventRecord,
} from '../../../lib/documents/outbox-event.document';
import type { Types } from 'mongoose';
import { eventSlot } from '../../../lib/events/event-slot';
import { idAfter } from '../../../lib/events/schedule/id-after';
import type { OutboxDeadLetter } from '../../../lib/documents/dead-letter.document';
import type {
  AggregateRef,
  DeadLetterRecord,
  DueAggregate,
  FailureRecord,
  MarkedDead,
  PendingState,
  RelayFence,
  ScheduledStats,
  StaleEvent,
} from '../../../lib/relay/ports/outbox-relay.store';
import { inSlotRange, slotsOfPartition } from '../../../lib/relay/ports/partition-layout';
import type { SlotRange } from '../../../lib/relay/ports/partition-layout';
import type { RelayLayout, RelayMember } from '../../../lib/relay/ports/relay-partitions.store';
import type { LeaseGrant, StoredCheckpoint } from '../../../lib/relay/ports/relay-state.store';
import type { SimScheduler } from '../core/sim.scheduler';
import { SIM_EPOCH_MS } from '../process/sim-process';
import { cappedScheduledCount } from '../../../lib/relay/ports/outbox-relay.store';
import {
  compareDueRuns,
  dueAggregatesOf,
  type DueKey,
} from '../../../lib/relay/scheduled/due-aggregates.collector';
import type { SimHistory } from '../world/sim.history';
import { afterToken, highWater, tokenBefore } from './sim-token';
import type { DbAnswer } from './sim-mongo.connection';
import { mongoErrors } from './sim-mongo.error';
import type { SimToken } from './sim-token';

/** The primary writes a no-op to the oplog when nothing was written for this long (mongod's `periodicNoopIntervalSecs`, 10). */
const PERIODIC_NOOP_MS = 10_000;

/** An insert as a change stream reads it (`database`: the tenant database, `ns.db`). */
export interface SimChange {
  token: SimToken;
  doc: SimOutboxDoc;
  database?: string;
}

/** An outbox document as the simulated server stores it. */
export interface SimOutboxDoc extends Omit<OutboxEventRecord, 'status'> {
  status: 'pending' | 'published' | 'dead' | 'cancelled';
  /** The owner stamp of the last fenced relay write. */
  relayFence?: number;
  /** `eventSlot(aggregateType, aggregateId)`, stamped at emit time (missing: written before slots). */
  slot?: number;
  errorHistory?: Array<{ at: Date; attempt: number; error: string }>;
  deadLetter?: DeadLetterRecord;
}

interface Stored {
  key: string;
  doc: SimOutboxDoc;
  /** Oplog position of the inserting transaction, and index in it. */
  pos: number;
  index: number;
  /** Oplog position of the transaction that cancelled it (majority reads see it pending until then). */
  cancelPos?: number;
  /** The tenant database it is in (undefined: the app's own, every run without tenants). */
  database?: string;
}

interface OplogEntry {
  pos: number;
  time: number;
  docs: Stored[];
  /** Documents the transaction cancelled (undone by a rollback). */
  cancelled: Stored[];
  rolledBack: boolean;
}

/** What a writer's transaction asks besides its inserts (see `SimDatabase.commit`). */
export interface SimCommitRequest {
  /** Indexes of the inserts emitted with `waitForScheduled: false`. */
  exempt?: ReadonlySet<number>;
  /** Cancellations, by eventId (undefined: the event named does not exist yet). */
  cancels?: ReadonlyArray<{ eventId?: string; label: string }>;
  /** The writer (app process) that commits it. */
  writer?: number;
  /** The tenant database the transaction writes in (undefined: the app's own). */
  database?: string;
}

/** The lease and checkpoint of one scope: `single` (the relay lease of `partitions: 1`) or a partition of a layout. */
export interface SimScopeState {
  lease?: LeaseGrant;
  checkpoint: StoredCheckpoint & { fencing?: number };
}

/** The scope of the single relay lease and checkpoint. */
export const SINGLE_SCOPE = 'single';

/** The scope key of partition `partition` of `layout`. */
export function partitionScope(layout: RelayLayout, partition: number): string {
  return `g${layout.generation}p${partition}of${layout.partitions}`;
}

/** The slot range of a partition scope key (`partitionScope`). */
export function rangeOfScope(scope: string): SlotRange | undefined {
  const match = /^g\d+p(\d+)of(\d+)$/.exec(scope);
  return match ? slotsOfPartition(Number(match[1]), Number(match[2])) : undefined;
}

/** What a write of the relay changed (for the fencing invariant). */
export interface LandedWrite {
  key: string;
  eventId: string;
  stampBefore?: number;
}

/** The database server as the relay observes it: majority reads, oplog, relay state. */
export class SimDatabase {
  private readonly docs = new Map<string, Stored>();
  private readonly oplog: OplogEntry[] = [];
  private nextPos = 1;
  private majorityPos = 0;
  private lastMajorityAt = 0;
  /** When the last majority-committed write applied (virtual ms). */
  private lastMajorityWriteAt = 0;
  /** `majorityWriteTime` calls waiting for the majority point; true once answered. */
  private majorityWaiters: Array<{
    answer: () => boolean;
    respond: (answer: DbAnswer<Date>) => void;
  }> = [];
  private electionUntil = 0;
  private readonly sequences = new Map<string, number>();
  /** The dead-letter collection, by eventId, in the production adapter's document shape. */
  readonly deadLetters = new Map<string, OutboxDeadLetter>();
  lease: LeaseGrant | undefined;
  checkpoint: StoredCheckpoint & { fencing?: number } = {};
  /** Partition scopes (the single scope is `lease` and `checkpoint` above). */
  private readonly scopes = new Map<string, SimScopeState>();
  /** Fencing numbers of every lease of every scope come from here (the shared counter). */
  private fencingCounter = 0;
  /** The stored layout (undefined: none ever stored) and live members' heartbeats. */
  layout: RelayLayout | undefined;
  readonly members = new Map<string, RelayMember>();
  /** While set, outbox reads see only documents whose slot lies in it (a partition's scoped read). */
  private slotRange?: SlotRange;
  /**
   * While set, outbox reads and writes see only this tenant database's documents. The tenant
   * databases are namespaces of this one replica set (one oplog, one majority point, one
   * stepdown for all of them, as on a MongoDB deployment), not databases of their own.
   */
  private database?: string;
  /** Called when the majority point moves (open change cursors wake up). */
  onMajority?: () => void;
  /** Called on a stepdown (open change cursors die). */
  onStepdown?: () => void;

  constructor(
    private readonly scheduler: SimScheduler,
    private readonly history: SimHistory,
    private readonly config: {
      aggregateSequence: boolean;
      oplogWindowMs: () => number;
      majorityLagMs: () => number;
      topicOf: (aggregateType: string) => string;
      sizeOf: (doc: SimOutboxDoc) => number;
      isOversize: (doc: SimOutboxDoc) => boolean;
      isPoison: (doc: SimOutboxDoc) => boolean;
    },
  ) {}

  // ---------------------------------------------------------------- time and elections

  get now(): number {
    return this.scheduler.now;
  }

  serverDate(): Date {
    return new Date(SIM_EPOCH_MS + this.scheduler.now);
  }

  /**
   * The majority commit point as a time, as mongod reports it in `hello.lastWrite.majorityWriteDate`:
   * the wall time of the last majority-committed write, in whole seconds (`HelloResponse` appends
   * it with `appendTimeT`), so it moves only when something is written (a commit, a relay write,
   * or the primary's periodic no-op every `PERIODIC_NOOP_MS` when nothing else was written), and
   * never past a commit not yet majority-committed. A majority read made after this sees every
   * commit (and cancellation) made by it.
   */
  majorityDate(): Date {
    const firstUncommitted = this.oplog.find((entry) => entry.pos > this.majorityPos);
    const noop = Math.floor(this.scheduler.now / PERIODIC_NOOP_MS) * PERIODIC_NOOP_MS;
    let time = Math.max(this.lastMajorityWriteAt, noop);
    if (firstUncommitted) time = Math.min(time, firstUncommitted.time - 1);
    return new Date(Math.floor((SIM_EPOCH_MS + time) / 1000) * 1000);
  }

  /** A relay write (lease, marks: majority-committed when they apply) moves the majority time. */
  noteMajorityWrite(): void {
    if (this.oplog.some((entry) => entry.pos > this.majorityPos)) return;
    this.lastMajorityWriteAt = this.scheduler.now;
  }

  /**
   * A no-op write with `w: "majority"` (`OutboxRelayStore.majorityWriteTime`): the server's time
   * when it applies, answered once every commit before it in the oplog is majority-committed
   * (rolled back with them at a stepdown: the answer is an error). Commits a stepdown rolled back
   * are not before it: they left the oplog, and their positions never become majority.
   */
  majorityWriteTime(respond: (answer: DbAnswer<Date>) => void): void {
    const at = this.serverDate();
    const target = this.oplog[this.oplog.length - 1]?.pos ?? 0;
    const answer = () => {
      if (this.majorityPos >= target) {
        this.lastMajorityWriteAt = Math.max(this.lastMajorityWriteAt, this.scheduler.now);
        respond({ ok: true, value: at });
        return true;
      }
      return false;
    };
    if (!answer()) this.majorityWaiters.push({ answer, respond });
  }

  electionActive(): boolean {
    return this.scheduler.now < this.electionUntil;
  }

  get electionEndsAt(): number {
    return this.electionUntil;
  }

  /**
   * The primary steps down: every commit not yet majority-committed is rolled back (it never
   * existed for the relay), open cursors die, and operations fail until a new primary is elected.
   */
  stepdown(electionMs: number): number {
    this.electionUntil = Math.max(this.electionUntil, this.scheduler.now + electionMs);
    let rolledBack = 0;
    while (this.oplog.length > 0 && this.oplog[this.oplog.length - 1].pos > this.majorityPos) {
      const entry = this.oplog.pop() as OplogEntry;
      entry.rolledBack = true;
      undoCancels(entry, this.history, this.scheduler.now);
      for (const stored of entry.docs) {
        this.docs.delete(stored.key);
        const fact = this.history.commits.get(stored.doc.eventId);
        if (fact) fact.rolledBackAt = this.scheduler.now;
        rolledBack++;
        if (typeof stored.doc.sequence === 'number') {
          const aggregate = namespacedKey(stored);
          this.sequences.set(aggregate, stored.doc.sequence - 1);
        }
      }
    }
    this.lastMajorityAt = this.scheduler.now;
    for (const waiter of this.majorityWaiters)
      waiter.respond({ ok: false, error: mongoErrors.interrupted(), applied: true });
    this.majorityWaiters = [];
    this.onStepdown?.();
    return rolledBack;
  }

  // ---------------------------------------------------------------- writers

  /**
   * Commits one transaction's inserts and cancellations (one oplog entry). Returns its position.
   * The write side's order rule is applied here, as the transaction's reads see the aggregate
   * (with `aggregateSequence` the counter's write conflict serializes transactions on one
   * aggregate; without it an aggregate has one writer): an insert of an aggregate with a pending
   * scheduled event gets `availableAt` = max(its own, the latest of theirs), unless it is
   * `exempt` (`waitForScheduled: false`); earlier inserts of the same transaction count. A
   * cancellation's filter (pending, scheduled, `availableAt` > the server's now) is evaluated
   * when the transaction commits (its statement's lock holds the document until then).
   */
  commit(docs: SimOutboxDoc[], request: SimCommitRequest = {}): number {
    const pos = this.nextPos++;
    const time = this.scheduler.now;
    const entry: OplogEntry = { pos, time, docs: [], cancelled: [], rolledBack: false };
    docs.forEach((doc, index) => {
      const own = doc.availableAt?.getTime();
      const exempt = request.exempt?.has(index) ?? false;
      if (!exempt) {
        const latest = this.latestScheduled(
          namespacedKey({ doc, database: request.database }),
          entry.docs,
        );
        if (latest !== undefined && (own === undefined || latest.at > own))
          doc.availableAt = new Date(latest.at);
        // The write side's rule (lib's own function): an `_id` after those it waits for.
        if (latest !== undefined) doc._id = idAfter(latest.lastId, doc._id);
      }
      if (this.config.aggregateSequence) {
        const aggregate = namespacedKey({ doc, database: request.database });
        const sequence = (this.sequences.get(aggregate) ?? 0) + 1;
        this.sequences.set(aggregate, sequence);
        doc.sequence = sequence;
      }
      const stored: Stored = { key: String(doc._id), doc, pos, index, database: request.database };
      entry.docs.push(stored);
      this.docs.set(stored.key, stored);
      this.history.commits.set(doc.eventId, {
        eventId: doc.eventId,
        docId: stored.key,
        aggregate: namespacedKey(stored),
        aggregateType: doc.aggregateType,
        topic: this.config.topicOf(doc.aggregateType),
        sequence: doc.sequence,
        pos,
        index,
        committedAt: time,
        bytes: this.config.sizeOf(doc),
        oversize: this.config.isOversize(doc),
        poison: this.config.isPoison(doc),
        slot: doc.slot,
        aggregateSlot: eventSlot(doc.aggregateType, doc.aggregateId),
        ...(doc.availableAt
          ? {
              availableAt: doc.availableAt.getTime() - SIM_EPOCH_MS,
              inherited: own === undefined || doc.availableAt.getTime() > own,
            }
          : {}),
        ...(exempt ? { exempt } : {}),
        ...(request.writer !== undefined ? { writer: request.writer } : {}),
        ...(request.database !== undefined ? { database: request.database } : {}),
      });
    });
    for (const cancel of request.cancels ?? []) this.cancel(entry, cancel);
    this.oplog.push(entry);
    const majorityAt = Math.max(this.lastMajorityAt, time + this.config.majorityLagMs());
    this.lastMajorityAt = majorityAt;
    this.scheduler.at(majorityAt, 'db', `majority ${pos}`, () => this.advanceMajority(entry));
    return pos;
  }

  private advanceMajority(entry: OplogEntry): void {
    if (entry.rolledBack || entry.pos <= this.majorityPos) return;
    this.majorityPos = entry.pos;
    this.lastMajorityWriteAt = Math.max(this.lastMajorityWriteAt, entry.time);
    this.majorityWaiters = this.majorityWaiters.filter((waiter) => !waiter.answer());
    for (const stored of entry.docs) {
      const fact = this.history.commits.get(stored.doc.eventId);
      if (fact) fact.majorityAt = this.scheduler.now;
    }
    for (const fact of this.history.cancels)
      if (fact.pos === entry.pos && fact.majorityAt === undefined)
        fact.majorityAt = this.scheduler.now;
    this.onMajority?.();
  }

  /** The latest `availableAt` (epoch ms) of the aggregate's pending scheduled events, if any. */
  private latestScheduled(
    aggregate: string,
    sameTransaction: readonly Stored[],
  ): { at: number; lastId: Types.ObjectId } | undefined {
    let latest: { at: number; lastId: Types.ObjectId } | undefined;
    for (const stored of [...this.docs.values(), ...sameTransaction]) {
      const { doc } = stored;
      if (doc.status !== 'pending' || !doc.availableAt || namespacedKey(stored) !== aggregate)
        continue;
      const at = Math.max(latest?.at ?? Number.NEGATIVE_INFINITY, doc.availableAt.getTime());
      const lastId =
        latest && compareKeys(latest.lastId.toHexString(), doc._id.toHexString()) > 0
          ? latest.lastId
          : doc._id;
      latest = { at, lastId };
    }
    return latest;
  }

  /** One `emitter.cancel(eventId)` of the committing transaction `entry` (recorded in history). */
  private cancel(entry: OplogEntry, request: { eventId?: string; label: string }): void {
    const stored = request.eventId
      ? this.docs.get(this.history.commits.get(request.eventId)?.docId ?? '')
      : undefined;
    const doc = stored?.doc;
    const now = this.serverDate().getTime();
    let outcome: CancelOutcome;
    if (!stored || !doc) outcome = 'not-found';
    else if (doc.status === 'published') outcome = 'published';
    else if (doc.status !== 'pending')
      outcome = doc.status === 'cancelled' ? 'cancelled-before' : 'not-found';
    else if (!doc.availableAt) outcome = 'not-scheduled';
    else if (doc.availableAt.getTime() <= now) outcome = 'already-due';
    else {
      outcome = 'cancelled';
      doc.status = 'cancelled';
      doc.cancelledAt = new Date(now);
      stored.cancelPos = entry.pos;
      entry.cancelled.push(stored);
    }
    this.history.cancels.push({
      label: request.label,
      eventId: request.eventId,
      at: this.scheduler.now,
      pos: entry.pos,
      outcome,
      availableAt: doc?.availableAt ? doc.availableAt.getTime() - SIM_EPOCH_MS : undefined,
    });
    this.history.note(
      `cancel ${request.label} (${request.eventId ?? 'not written yet'}): ${outcome}`,
    );
  }

  // ---------------------------------------------------------------- oplog and change streams

  /** Oldest time still in the oplog. */
  horizon(): number {
    return this.scheduler.now - this.config.oplogWindowMs();
  }

  /** The majority-committed end of the oplog, as a stream position. */
  highWater(): SimToken {
    const firstUncommitted = this.oplog.find((entry) => entry.pos > this.majorityPos);
    const time = firstUncommitted ? firstUncommitted.time - 1 : this.scheduler.now;
    return highWater(this.majorityPos, time);
  }

  /** The end of the oplog, committed or not (where a stream opened "now" starts). */
  endOfOplog(): SimToken {
    return highWater(this.nextPos - 1, this.scheduler.now);
  }

  /** Whether a stream cannot go on from `token` (its oplog entry is gone). */
  isLost(token: SimToken): boolean {
    return token.time < this.horizon();
  }

  /** Whether a majority-committed change exists after `token`. */
  hasChangesAfter(token: SimToken): boolean {
    return this.changesAfter(token, 1).length > 0;
  }

  /** Majority-committed inserts after `token`, in commit order, at most `limit`. */
  changesAfter(
    token: SimToken,
    limit: number,
    range?: SlotRange,
    databases?: ReadonlySet<string | undefined>,
  ): SimChange[] {
    const result: SimChange[] = [];
    for (const entry of this.oplog) {
      if (entry.pos > this.majorityPos) break;
      if (entry.pos < token.pos) continue;
      for (const stored of entry.docs) {
        const position = { pos: entry.pos, index: stored.index, time: entry.time };
        if (!afterToken(position, token)) continue;
        // A partition's stream: slot in range, or no slot and its aggregate's (MongoChangeSource).
        if (range && !inSlotRange(range, stored.doc)) continue;
        // A cluster-wide stream filtered on `ns.db`.
        if (databases && !databases.has(stored.database)) continue;
        result.push({ token: position, doc: insertedCopy(stored.doc), database: stored.database });
        if (result.length >= limit) return result;
      }
    }
    return result;
  }

  // ---------------------------------------------------------------- outbox reads (majority)

  private visible(): Stored[] {
    const result: Stored[] = [];
    for (const stored of this.docs.values())
      if (stored.pos <= this.majorityPos && this.inRange(stored.doc) && this.inDatabase(stored))
        result.push(this.asMajority(stored));
    return result;
  }

  /** The document as a majority read sees it: a cancellation not yet majority-committed is not. */
  private asMajority(stored: Stored): Stored {
    if (stored.cancelPos === undefined || stored.cancelPos <= this.majorityPos) return stored;
    const doc = copyDoc(stored.doc);
    doc.status = 'pending';
    delete doc.cancelledAt;
    return { ...stored, doc };
  }

  private inRange(doc: SimOutboxDoc, range = this.slotRange): boolean {
    if (!range) return true;
    return doc.slot !== undefined && doc.slot >= range.from && doc.slot < range.to;
  }

  private inDatabase(stored: Stored): boolean {
    return this.database === undefined || stored.database === this.database;
  }

  /** Runs `fn` on one tenant database's outbox (undefined: every document, as without tenants). */
  inTenantDatabase<T>(database: string | undefined, fn: () => T): T {
    return this.within({ database }, fn);
  }

  /** Whether the tenant database in scope has a pending event, scheduled ones too (one count). */
  hasPending(): boolean {
    // As `MongoTenantPorts.hasPending`: in a partition, its slots' events and those without a slot
    // (its term stamps them before reading its range).
    const range = this.slotRange;
    const mine = (doc: SimOutboxDoc) => doc.slot === undefined || this.inRange(doc, range);
    return this.within({ slotRange: undefined }, () =>
      this.visible().some((stored) => stored.doc.status === 'pending' && mine(stored.doc)),
    );
  }

  /**
   * `dropDatabase` of a tenant database: its outbox and dead letters are gone (its inserts stay
   * in the oplog, where a stream reading from before the drop still finds them). Returns how
   * many outbox documents it held.
   */
  dropTenantDatabase(database: string): number {
    let dropped = 0;
    for (const [key, stored] of this.docs) {
      if (stored.database !== database) continue;
      this.docs.delete(key);
      this.deadLetters.delete(stored.doc.eventId);
      dropped++;
    }
    return dropped;
  }

  /** Runs the read `fn` as a partition's scoped read (only documents with a slot in `range`). */
  scoped<T>(range: SlotRange | undefined, fn: () => T): T {
    return this.within({ slotRange: range }, fn);
  }

  /** Runs `fn` with a read scope set (a slot range, a tenant database), then the previous one. */
  private within<T>(scope: { slotRange?: SlotRange } | { database?: string }, fn: () => T): T {
    const before = { slotRange: this.slotRange, database: this.database };
    Object.assign(this, scope);
    try {
      return fn();
    } finally {
      Object.assign(this, before);
    }
  }

  /**
   * Stamps `slot` (by `slotOf`) on up to `limit` pending or dead-marked documents without one
   * (published ones need no relay any more); returns their eventIds.
   */
  stampMissingSlots(limit: number, slotOf: (doc: SimOutboxDoc) => number): string[] {
    const stamped: string[] = [];
    for (const stored of this.docs.values()) {
      if (stamped.length >= limit) break;
      if (stored.pos > this.majorityPos || stored.doc.slot !== undefined) continue;
      if (stored.doc.status === 'published') continue;
      stored.doc.slot = slotOf(stored.doc);
      stamped.push(stored.doc.eventId);
    }
    return stamped;
  }

  private pending(): Stored[] {
    return this.visible().filter((stored) => stored.doc.status === 'pending');
  }

  /** Pending and majority-committed, whatever the scope (reads by `_id` or by aggregate). */
  private pendingInAnyScope(): Stored[] {
    return this.scoped(undefined, () => this.pending());
  }

  findPendingState(ids: readonly unknown[]): PendingState[] {
    const result: PendingState[] = [];
    for (const id of ids) {
      const found = this.docs.get(String(id));
      const stored = found && this.inDatabase(found) ? this.asMajority(found) : undefined;
      if (!stored || stored.pos > this.majorityPos || stored.doc.status !== 'pending') continue;
      const { payload: _payload, headers: _headers, ...state } = copyDoc(stored.doc);
      result.push(state as PendingState);
    }
    return result;
  }

  /**
   * These aggregates' pending events in drain order (by aggregate, then aggregate order), at most
   * `limit`; with `dueBy`: scheduled events not due by it left out, before the limit (as the adapter).
   */
  findPendingOfAggregates(
    refs: readonly AggregateRef[],
    limit: number,
    dueBy?: Date,
  ): OutboxEventRecord[] {
    const keys = new Set(refs.map(aggregateKey));
    return this.pendingInAnyScope()
      .filter(
        ({ doc }) =>
          keys.has(aggregateKey(doc)) &&
          (!dueBy || !doc.availableAt || doc.availableAt.getTime() <= dueBy.getTime()),
      )
      .sort((a, b) => compareDrainKeys(a.doc, b.doc, false))
      .slice(0, limit)
      .map((stored) => asRecord(stored.doc));
  }

  /** Pending scheduled events (with `availableAt`) in scope, in `DUE_RUN_ORDER`. */
  private scheduled(): SimOutboxDoc[] {
    return this.pending()
      .filter((stored) => stored.doc.availableAt !== undefined)
      .sort((a, b) => compareDueRuns(dueKey(a.doc), dueKey(b.doc)) || compareKeys(a.key, b.key))
      .map((stored) => stored.doc);
  }

  /**
   * Aggregates with a due scheduled event marked or not, each once, by their earliest one: the
   * production store's reads (`DueAggregatesCollector`: runs, batch sizes, at most `limit`).
   */
  findDueAggregates(dueBy: Date, limit: number, marked: boolean): DueAggregate[] {
    const due = this.scheduled().filter(
      (doc) =>
        (doc.availableAt as Date).getTime() <= dueBy.getTime() &&
        Boolean(doc.nextAttemptAt) === marked,
    );
    return dueAggregatesOf(due.map(dueKey), limit);
  }

  scheduledStats(now: Date): ScheduledStats {
    const scheduled = this.scheduled();
    if (scheduled.length === 0) return { count: 0 };
    const at = (doc?: SimOutboxDoc) =>
      doc ? new Date((doc.availableAt as Date).getTime()) : undefined;
    return {
      ...cappedScheduledCount(scheduled.length),
      oldestOverdueAt: at(scheduled.find((doc) => (doc.availableAt as Date) <= now)),
      nextDueAt: at(scheduled.find((doc) => (doc.availableAt as Date) > now)),
    };
  }

  nextDueAt(after?: Date): Date | undefined {
    const first = this.scheduled().find(
      (doc) => !after || (doc.availableAt as Date).getTime() > after.getTime(),
    );
    return first ? new Date((first.availableAt as Date).getTime()) : undefined;
  }

  findPendingPage(after: OutboxEventRecord | undefined, limit: number): OutboxEventRecord[] {
    // A partition's pages come slot first (the adapter's `SLOT_DRAIN_ORDER`).
    const bySlot = this.slotRange !== undefined;
    const page = this.pending()
      .filter((stored) => stored.doc.availableAt === undefined)
      .sort((a, b) => compareDrainKeys(a.doc, b.doc, bySlot))
      .filter((stored) => !after || compareDrainKeys(stored.doc, after, bySlot) > 0)
      .slice(0, limit);
    // And in the same read, every pending event without a slot, first (a missing slot sorts
    // first): the adapter's read once it asked for as many more as there are.
    const unslotted = bySlot
      ? this.pendingInAnyScope()
          .filter((stored) => stored.doc.slot === undefined && stored.doc.availableAt === undefined)
          .sort((a, b) => compareDrainKeys(a.doc, b.doc, false))
      : [];
    return [...unslotted, ...page].map((stored) => asRecord(stored.doc));
  }

  findRetryingAggregates(
    after: AggregateRef | undefined,
    limit: number,
  ): Array<AggregateRef & { retryAt: Date }> {
    const bySlot = this.slotRange !== undefined;
    const byAggregate = new Map<string, AggregateRef & { retryAt: Date; slot?: number }>();
    for (const { doc } of this.pending()) {
      if (!doc.nextAttemptAt) continue;
      const key = aggregateKey(doc);
      const known = byAggregate.get(key);
      if (!known || doc.nextAttemptAt.getTime() < known.retryAt.getTime()) {
        byAggregate.set(key, {
          aggregateType: doc.aggregateType,
          aggregateId: doc.aggregateId,
          retryAt: new Date(doc.nextAttemptAt.getTime()),
          slot: doc.slot,
        });
      }
    }
    return [...byAggregate.values()]
      .sort((a, b) => compareRefs(a, b, bySlot))
      .filter((ref) => !after || compareRefs(ref, after, bySlot) > 0)
      .slice(0, limit)
      .map(({ slot: _slot, ...ref }) => ref);
  }

  findStaleEvents(afterId: unknown, olderThan: Date, dueBy: Date, limit: number): StaleEvent[] {
    const after = afterId === undefined || afterId === null ? undefined : String(afterId);
    return this.pending()
      .filter(
        ({ key, doc }) =>
          (after === undefined || key > after) &&
          doc.availableAt === undefined &&
          doc.occurredAt.getTime() < olderThan.getTime() &&
          (!doc.nextAttemptAt || doc.nextAttemptAt.getTime() <= dueBy.getTime()),
      )
      .sort((a, b) => compareKeys(a.key, b.key))
      .slice(0, limit)
      .map(({ doc }) => ({
        _id: doc._id,
        aggregateType: doc.aggregateType,
        aggregateId: doc.aggregateId,
      }));
  }

  pendingStats(): { count: number; oldestOccurredAt?: Date } {
    const pending = this.pending().filter((stored) => stored.doc.availableAt === undefined);
    if (pending.length === 0) return { count: 0 };
    // The occurredAt of the first pending event by _id, as the adapter reads it.
    const first = pending.reduce((a, b) => (compareKeys(b.key, a.key) < 0 ? b : a));
    return { count: pending.length, oldestOccurredAt: new Date(first.doc.occurredAt.getTime()) };
  }

  findMarkedDead(limit: number): MarkedDead[] {
    return this.visible()
      .filter((stored) => stored.doc.status === 'dead')
      .sort((a, b) => compareKeys(a.key, b.key))
      .slice(0, limit)
      .map((stored) => copyDoc(stored.doc) as unknown as MarkedDead);
  }

  /** Server-side view for the invariants: the stored document of an event, if still there. */
  inspect(eventId: string): SimOutboxDoc | undefined {
    const fact = this.history.commits.get(eventId);
    return fact ? this.docs.get(fact.docId)?.doc : undefined;
  }

  // ---------------------------------------------------------------- outbox writes (fenced)

  /**
   * Applies `change` to each named document that `applies` accepts and whose stamp is not
   * above `fence`, then stamps it with `fence` (a `null` fence writes unconditionally, no stamp).
   */
  private fencedWrite(
    ids: readonly unknown[],
    fence: RelayFence,
    applies: (doc: SimOutboxDoc) => boolean,
    change: (doc: SimOutboxDoc) => void,
  ): LandedWrite[] {
    const landed: LandedWrite[] = [];
    for (const id of ids) {
      const stored = this.docs.get(String(id));
      if (!stored || !this.inDatabase(stored)) continue;
      if (stored.pos > this.majorityPos || !applies(stored.doc)) continue;
      const stamp = stored.doc.relayFence;
      if (fence !== null && stamp !== undefined && stamp > fence) continue;
      change(stored.doc);
      if (fence !== null) stored.doc.relayFence = fence;
      landed.push({ key: stored.key, eventId: stored.doc.eventId, stampBefore: stamp });
    }
    return landed;
  }

  markPublished(ids: readonly unknown[], at: Date, fence: RelayFence): LandedWrite[] {
    return this.fencedWrite(
      ids,
      fence,
      (doc) => doc.status === 'pending',
      (doc) => {
        doc.status = 'published';
        doc.publishedAt = new Date(at.getTime());
        delete doc.nextAttemptAt;
      },
    );
  }

  markHeld(ids: readonly unknown[], retryAt: Date, fence: RelayFence): LandedWrite[] {
    return this.fencedWrite(
      ids,
      fence,
      // A failed event's own retry time stays (the adapter's `nextAttemptAt: { $exists: false }`).
      (doc) => doc.status === 'pending' && doc.nextAttemptAt === undefined,
      (doc) => {
        doc.nextAttemptAt = new Date(retryAt.getTime());
      },
    );
  }

  recordFailure(
    event: OutboxEventRecord,
    failure: FailureRecord,
    fence: RelayFence,
  ): LandedWrite[] {
    return this.fencedWrite(
      [event._id],
      fence,
      (doc) => doc.status === 'pending',
      (doc) => {
        doc.attempts = failure.attempts;
        doc.nextAttemptAt = new Date(failure.nextAttemptAt.getTime());
        doc.lastError = failure.error;
        doc.errorHistory = [
          ...(doc.errorHistory ?? []),
          { at: new Date(failure.at.getTime()), attempt: failure.attempts, error: failure.error },
        ].slice(-20);
      },
    );
  }

  markDead(event: OutboxEventRecord, record: DeadLetterRecord, fence: RelayFence): LandedWrite[] {
    const landed = this.fencedWrite(
      [event._id],
      fence,
      (doc) => doc.status === 'pending',
      (doc) => {
        doc.status = 'dead';
        doc.deadLetter = { ...record, at: new Date(record.at.getTime()) };
        delete doc.nextAttemptAt;
      },
    );
    for (const write of landed) {
      if (!this.history.deadMarked.has(write.eventId))
        this.history.deadMarked.set(write.eventId, this.scheduler.now);
    }
    return landed;
  }

  /** The adapter's upsert by eventId: the event's fields on insert, the dead-letter fields always. */
  copyToDeadLetters(event: MarkedDead): void {
    const {
      _id,
      status: _status,
      errorHistory,
      deadLetter,
      relayFence: _fence,
      nextAttemptAt: _next,
      lastError: _lastError,
      attempts: _attempts,
      ...rest
    } = copyDoc(event as unknown as SimOutboxDoc);
    const record = deadLetter as DeadLetterRecord;
    const existing = this.deadLetters.get(event.eventId);
    this.deadLetters.set(event.eventId, {
      ...(existing ?? { ...rest, outboxId: _id }),
      reason: record.reason,
      attempts: record.attempts,
      lastError: record.error,
      errors: [
        ...(errorHistory ?? []),
        { at: record.at, attempt: record.attempts, error: record.error },
      ].slice(-20),
      deadLetteredAt: record.at,
    });
  }

  removeDead(id: unknown, fence: RelayFence): LandedWrite[] {
    const landed = this.fencedWrite(
      [id],
      fence,
      (doc) => doc.status === 'dead',
      () => undefined,
    );
    for (const write of landed) this.docs.delete(write.key);
    return landed;
  }

  // ---------------------------------------------------------------- relay state

  /** The lease and checkpoint of `scope` (created empty on first use). */
  scopeState(scope: string = SINGLE_SCOPE): SimScopeState {
    if (scope === SINGLE_SCOPE) return this.single;
    let state = this.scopes.get(scope);
    if (!state) this.scopes.set(scope, (state = { checkpoint: {} }));
    return state;
  }

  /** The single scope, as a view over `lease` and `checkpoint`. */
  private readonly single: SimScopeState = (() => {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const db = this;
    return {
      get lease() {
        return db.lease;
      },
      set lease(value) {
        db.lease = value;
      },
      get checkpoint() {
        return db.checkpoint;
      },
      set checkpoint(value) {
        db.checkpoint = value;
      },
    };
  })();

  acquireLease(
    owner: string,
    serverNow: Date,
    expiresAt: Date,
    scope: string = SINGLE_SCOPE,
  ): LeaseGrant | undefined {
    const state = this.scopeState(scope);
    const current = state.lease;
    if (current && current.owner !== owner && current.expiresAt.getTime() > serverNow.getTime()) {
      return undefined;
    }
    this.fencingCounter = Math.max(this.fencingCounter, current?.fencing ?? 0) + 1;
    const grant = {
      owner,
      fencing: this.fencingCounter,
      expiresAt: new Date(expiresAt.getTime()),
    };
    state.lease = grant;
    return { ...grant, expiresAt: new Date(grant.expiresAt.getTime()) };
  }

  renewLease(owner: string, fencing: number, expiresAt: Date, scope?: string): boolean {
    const state = this.scopeState(scope);
    if (!state.lease || state.lease.owner !== owner || state.lease.fencing !== fencing)
      return false;
    state.lease = { ...state.lease, expiresAt: new Date(expiresAt.getTime()) };
    return true;
  }

  releaseLease(owner: string, fencing: number, scope?: string): boolean {
    const state = this.scopeState(scope);
    if (!state.lease || state.lease.owner !== owner || state.lease.fencing !== fencing)
      return false;
    state.lease = { ...state.lease, expiresAt: new Date(0) };
    return true;
  }

  /**
   * Whether `owner` holds an unexpired lease of `scope` now, by the server's clock (with
   * `fencing` if given). `scope` `any`: a lease of any scope.
   */
  holdsLease(owner: string, fencing?: number | null, scope: string = SINGLE_SCOPE): boolean {
    if (scope === 'any') {
      return [SINGLE_SCOPE, ...this.scopes.keys()].some((key) =>
        this.holdsLease(owner, fencing, key),
      );
    }
    const lease = this.scopeState(scope).lease;
    return (
      lease !== undefined &&
      lease.owner === owner &&
      (fencing === undefined || fencing === null || lease.fencing === fencing) &&
      lease.expiresAt.getTime() > this.serverDate().getTime()
    );
  }

  claimCheckpoint(fencing: number, scope?: string): StoredCheckpoint | undefined {
    const state = this.scopeState(scope);
    if ((state.checkpoint.fencing ?? 0) > fencing) return undefined;
    state.checkpoint = { ...state.checkpoint, fencing };
    return { token: state.checkpoint.token, savedAt: state.checkpoint.savedAt };
  }

  writeCheckpoint(token: SimToken | undefined, fencing: number, at: Date, scope?: string): boolean {
    const state = this.scopeState(scope);
    if ((state.checkpoint.fencing ?? 0) > fencing) return false;
    state.checkpoint = { token, savedAt: new Date(at.getTime()), fencing };
    return true;
  }

  /**
   * Switches the layout if it is still `expected` (by generation) and no lease of `expected`
   * is valid now, in one step: every lease of `expected` is closed (a fencing number above
   * all so far, held by `layout#g` until far in the future), so none can be taken between
   * the check and the switch, and relays of the old layout (or that know no layouts: the
   * single lease) can take nothing after it. A switch to 1 partition opens the single lease
   * again (expired, so free).
   */
  switchLayout(expected: RelayLayout | undefined, partitions: number): RelayLayout | undefined {
    if (this.layout?.generation !== expected?.generation) return undefined;
    const now = this.serverDate().getTime();
    const old =
      !expected || expected.partitions === 1
        ? [SINGLE_SCOPE]
        : Array.from({ length: expected.partitions }, (_, p) => partitionScope(expected, p));
    if (old.some((scope) => (this.scopeState(scope).lease?.expiresAt.getTime() ?? 0) > now)) {
      return undefined;
    }
    const generation = (expected?.generation ?? 0) + 1;
    const closed = (): LeaseGrant => ({
      owner: `layout#${generation}`,
      fencing: ++this.fencingCounter,
      expiresAt: new Date(8_640_000_000_000_000),
    });
    for (const scope of old) this.scopeState(scope).lease = closed();
    this.layout = { partitions, generation };
    this.lease = {
      ...closed(),
      expiresAt: new Date(partitions === 1 ? 0 : 8_640_000_000_000_000),
    };
    return { ...this.layout };
  }

  /** Server-side view for the invariants: every stored event at or before `token` (of `range`). */
  eventsUpTo(token: SimToken, range?: SlotRange): SimOutboxDoc[] {
    const result: SimOutboxDoc[] = [];
    for (const entry of this.oplog) {
      if (entry.pos > token.pos) break;
      for (const stored of entry.docs) {
        if (!tokenBefore({ pos: entry.pos, index: stored.index, time: entry.time }, token, true))
          continue;
        if (!this.inRange(stored.doc, range)) continue;
        result.push(stored.doc);
      }
    }
    return result;
  }
}

/** What a cancellation found (`emitter.cancel`'s result; `cancelled-before`: cancelled already). */
export type CancelOutcome =
  'cancelled' | 'already-due' | 'published' | 'not-scheduled' | 'not-found' | 'cancelled-before';

/** A rollback undoes the cancellations of `entry`. */
function undoCancels(entry: OplogEntry, history: SimHistory, now: number): void {
  if (entry.cancelled.length > 0) history.countEffect('rolled-back-cancel', entry.cancelled.length);
  for (const stored of entry.cancelled) {
    stored.doc.status = 'pending';
    delete stored.doc.cancelledAt;
    delete stored.cancelPos;
  }
  for (const fact of history.cancels)
    if (fact.pos === entry.pos && fact.rolledBackAt === undefined) fact.rolledBackAt = now;
}

export function aggregateKey(ref: AggregateRef): string {
  return `${ref.aggregateType}/${ref.aggregateId}`;
}

/** An aggregate in its database: one aggregate id in two tenant databases is two aggregates. */
function namespacedKey(stored: { doc: AggregateRef; database?: string }): string {
  const key = aggregateKey(stored.doc);
  return stored.database === undefined ? key : `${stored.database}:${key}`;
}

/** Byte order of strings (ObjectId hex, type and id names are ASCII). */
function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** An aggregate's slot: stored on its events, and a function of the aggregate alone. */
function slotOf(ref: AggregateRef & { slot?: number }): number {
  return ref.slot ?? eventSlot(ref.aggregateType, ref.aggregateId);
}

/** By type, then id; a partition's reads by slot first. */
function compareRefs(
  a: AggregateRef & { slot?: number },
  b: AggregateRef & { slot?: number },
  bySlot = false,
): number {
  return (bySlot ? slotOf(a) - slotOf(b) : 0) || compareAggregates(a, b);
}

function compareDrainKeys(
  a: AggregateRef & { slot?: number; sequence?: number; _id: unknown },
  b: AggregateRef & { slot?: number; sequence?: number; _id: unknown },
  bySlot: boolean,
): number {
  return (bySlot ? slotOf(a) - slotOf(b) : 0) || inDrainOrder(a, b);
}

function copyDate(date: Date | undefined): Date | undefined {
  return date === undefined ? undefined : new Date(date.getTime());
}

/** A copy the caller may change without touching the server's document. */
export function copyDoc(doc: SimOutboxDoc): SimOutboxDoc {
  const copy: SimOutboxDoc = {
    ...doc,
    payload: JSON.parse(JSON.stringify(doc.payload)) as Record<string, unknown>,
    occurredAt: new Date(doc.occurredAt.getTime()),
  };
  if (doc.headers) copy.headers = { ...doc.headers };
  if (doc.nextAttemptAt) copy.nextAttemptAt = copyDate(doc.nextAttemptAt);
  if (doc.publishedAt) copy.publishedAt = copyDate(doc.publishedAt);
  if (doc.availableAt) copy.availableAt = copyDate(doc.availableAt);
  if (doc.cancelledAt) copy.cancelledAt = copyDate(doc.cancelledAt);
  if (doc.errorHistory)
    copy.errorHistory = doc.errorHistory.map((entry) => ({ ...entry, at: new Date(entry.at) }));
  if (doc.deadLetter) copy.deadLetter = { ...doc.deadLetter, at: new Date(doc.deadLetter.at) };
  return copy;
}

function asRecord(doc: SimOutboxDoc): OutboxEventRecord {
  return copyDoc(doc) as unknown as OutboxEventRecord;
}

/** The document as its insert wrote it (what the change stream's `fullDocument` carries). */
function insertedCopy(doc: SimOutboxDoc): SimOutboxDoc {
  const copy = copyDoc(doc);
  copy.status = 'pending';
  copy.attempts = 0;
  delete copy.nextAttemptAt;
  delete copy.lastError;
  delete copy.publishedAt;
  delete copy.errorHistory;
  delete copy.deadLetter;
  delete copy.relayFence;
  return copy;
}

function dueKey(doc: SimOutboxDoc): DueKey {
  const { aggregateType, aggregateId } = doc;
  return { aggregateType, aggregateId, availableAt: new Date((doc.availableAt as Date).getTime()) };
}
