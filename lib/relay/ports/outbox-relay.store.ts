import type {
  DeadLetterRecord,
  MarkedDead,
  OutboxEventRecord,
} from '../../documents/outbox-event.document';

export type { DeadLetterRecord, MarkedDead } from '../../documents/outbox-event.document';

/** An outbox document without its body (`payload`, `headers`). */
export type PendingState = Omit<OutboxEventRecord, 'payload' | 'headers'>;

/** One aggregate: the unit of ordering. */
export interface AggregateRef {
  aggregateType: string;
  aggregateId: string;
}

/**
 * The owner stamp of relay writes. Every write the relay makes to an outbox document is
 * conditioned on the document not carrying a higher stamp, and stamps it with this one: once a
 * newer leader wrote a document, no write of an older leader lands on it. `null` when the lease
 * is disabled (every instance publishes).
 */
export type RelayFence = number | null;

export interface FailureRecord {
  /** Attempts including this one. */
  attempts: number;
  nextAttemptAt: Date;
  error: string;
  at: Date;
}

/** An aggregate with a scheduled event due, and the earliest `availableAt` of its due ones. */
export type DueAggregate = AggregateRef & { availableAt: Date };

/** The pending scheduled events (with `availableAt`) in a store's scope, at `now` (server time). */
/**
 * The most scheduled events a count reads (`ScheduledStats.count`): each sweep and health probe
 * counts, and a count of every pending scheduled event reads one index key each.
 */
export const SCHEDULED_COUNT_CAP = 10_000;

export interface ScheduledStats {
  /** Pending scheduled events, counted up to `SCHEDULED_COUNT_CAP` (then `countCapped`: at least that many). */
  count: number;
  /** The count stopped at `SCHEDULED_COUNT_CAP`. */
  countCapped?: true;
  /** The earliest `availableAt` still to come (after `now`). */
  nextDueAt?: Date;
  /** The earliest `availableAt` already passed (at or before `now`): due, not yet published. */
  oldestOverdueAt?: Date;
}

/** `ScheduledStats.count` of `count` pending scheduled events, as the production store counts them. */
export function cappedScheduledCount(count: number): Pick<ScheduledStats, 'count' | 'countCapped'> {
  return count >= SCHEDULED_COUNT_CAP
    ? { count: SCHEDULED_COUNT_CAP, countCapped: true }
    : { count };
}

/** An event the sweep looks at: pending for too long, not waiting for a retry. */
export interface StaleEvent extends AggregateRef {
  _id: OutboxEventRecord['_id'];
}

/**
 * What the relay reads and writes in the outbox collection (MongoDB: `MongoOutboxRelayStore`,
 * reading from the primary at read concern majority, writing with `w: 'majority'`).
 *
 * Reads return `pending` events only. A pending event with `nextAttemptAt` is a durable marker:
 * its aggregate is on the slow path (a failed attempt, or held back behind one), and a relay
 * that starts must read that aggregate from the collection before publishing newer events of it.
 *
 * A pending event with `availableAt` is scheduled: it may be published only once the server's
 * clock reached it. The stream never takes one; the drain and the sweep skip them; catch-up
 * reads leave out those not due; the due reader finds them (`findDueAggregates`).
 * Every time compared with `availableAt` is the server's (`serverTime`; the due reader's is
 * `majorityTime`).
 */
export interface OutboxRelayStore {
  /** The pending ones among these `_id`s (any order), without `payload` and `headers`. */
  findPendingState(ids: readonly unknown[]): Promise<PendingState[]>;
  /**
   * Pending events of these aggregates (one read for many: the catch-up reads'), aggregate by
   * aggregate in the drain's order (`DRAIN_ORDER`: type, then id, binary order), each in aggregate
   * order (`AGGREGATE_ORDER`), at most `limit` in all: only the last aggregate of a full answer
   * may have more. With `dueBy` (server time), scheduled events whose `availableAt` is after it
   * are left out (before the limit): an aggregate's later events are scheduled no earlier (the
   * write side's order rule), except those emitted with `waitForScheduled: false`, which are not
   * ordered against them and are read.
   */
  findPendingOfAggregates(
    refs: readonly AggregateRef[],
    limit: number,
    dueBy?: Date,
  ): Promise<OutboxEventRecord[]>;
  /**
   * The drain's pages: pending events without `availableAt`, aggregate by aggregate (by type,
   * then id, binary order), each in aggregate order, after the event `after` of the previous
   * page, at most `limit`. A partition's store (slot range first): `limit` events with a slot
   * in its range, each preceded by the events of its aggregate written without a slot that
   * come earlier, all from one read (`withOlderUnslotted`); fewer only when the range has no more.
   */
  findPendingPage(
    after: OutboxEventRecord | undefined,
    limit: number,
  ): Promise<OutboxEventRecord[]>;
  /**
   * Aggregates with a pending event that has `nextAttemptAt` (the earliest per aggregate), by
   * aggregate (type, then id), after `after`, at most `limit`: read page by page at start-up.
   */
  findRetryingAggregates(
    after: AggregateRef | undefined,
    limit: number,
  ): Promise<Array<AggregateRef & { retryAt: Date }>>;
  /**
   * The sweep's scan: pending events without `availableAt` that occurred before `olderThan` and
   * do not wait for a retry after `dueBy`, by `_id`, after `afterId`, at most `limit`.
   */
  findStaleEvents(
    afterId: unknown,
    olderThan: Date,
    dueBy: Date,
    limit: number,
  ): Promise<StaleEvent[]>;
  /**
   * Only on a partition's store (reads limited to a slot range): stamps `slot` on up to `limit`
   * events written without one (by a version before slots), which its range reads do not see
   * until then, and returns how many it found. Run before reading from the collection what came
   * before the stream's position (see `stampSlotsBeforeRangeReads`).
   */
  stampMissingSlots?(limit: number): Promise<number>;
  /** The database server's current time (MongoDB: `hello.localTime` of the primary). */
  serverTime(): Promise<Date>;
  /**
   * A time on the server's clock by which every write is majority-committed: a majority read
   * made after this resolves sees every write committed at or before it (MongoDB: the earlier
   * of `hello.localTime` and `hello.lastWrite.majorityWriteDate`, see `majorityTime`). What the
   * due reader publishes by (`dueBy`): a cancellation committed before an event's due time is
   * visible to the reads that decide to publish it. Never after `serverTime()` read later.
   */
  majorityTime(): Promise<Date>;
  /**
   * Writes a no-op with `w: "majority"` and returns the server's time when it applied, in
   * milliseconds: once it resolves, every write committed on that primary before then is
   * majority-committed (they precede it in the oplog), so it may serve as `majorityTime`. What
   * the due reader asks when an event is due by its timer but not yet by `majorityTime`, whose
   * MongoDB value (`majorityWriteDate`) is in whole seconds and moves only with writes.
   */
  majorityWriteTime(): Promise<Date>;
  /**
   * Aggregates with a pending scheduled event whose `availableAt` is at or before `dueBy`
   * (server time), by their earliest such event in (`availableAt`, `_id`) order, each once, at
   * most `limit`: with `marked` false only events without a marker (`nextAttemptAt`), with true
   * only marked ones (held back behind a failure or a held destination: the due reader asks for
   * those after the others, so aggregates waiting for a held topic do not lead every page).
   */
  findDueAggregates(dueBy: Date, limit: number, marked: boolean): Promise<DueAggregate[]>;
  /**
   * The earliest `availableAt` of the pending scheduled events (due or not), or with `after`
   * the earliest after it; none: undefined.
   */
  nextDueAt(after?: Date): Promise<Date | undefined>;
  /** Count, next due time and oldest overdue time of the pending scheduled events at `now`. */
  scheduledStats(now: Date): Promise<ScheduledStats>;
  /** Count and `occurredAt` of the oldest pending event without `availableAt` (the relay's lag). */
  pendingStats(): Promise<{ count: number; oldestOccurredAt?: Date }>;
  /** Events marked dead whose move to the dead-letter collection did not finish (a crash). */
  findMarkedDead(limit: number): Promise<MarkedDead[]>;

  /** Pending -> published (the broker acknowledged them); clears `nextAttemptAt`. */
  markPublished(ids: readonly unknown[], at: Date, fence: RelayFence): Promise<void>;
  /** Sets `nextAttemptAt` on pending events held back behind a failure of their aggregate. */
  markHeld(ids: readonly unknown[], retryAt: Date, fence: RelayFence): Promise<void>;
  /** Records a failed attempt (attempts, `nextAttemptAt`, last error, error history). */
  recordFailure(event: OutboxEventRecord, failure: FailureRecord, fence: RelayFence): Promise<void>;
  /**
   * First step of a dead-letter move: pending -> `dead`, with the record, in one document write.
   * From here on the event is no longer pending; `findMarkedDead` finds it until it is moved.
   */
  markDead(event: OutboxEventRecord, record: DeadLetterRecord, fence: RelayFence): Promise<void>;
  /** Second step: copies a dead-marked event to the dead-letter collection (idempotent, by `eventId`). */
  copyToDeadLetters(event: MarkedDead): Promise<void>;
  /** Last step: removes the dead-marked event from the outbox. */
  removeDead(id: unknown, fence: RelayFence): Promise<void>;
}
