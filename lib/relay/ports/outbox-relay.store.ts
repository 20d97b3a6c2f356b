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
 */
export interface OutboxRelayStore {
  /** The pending ones among these `_id`s (any order), without `payload` and `headers`. */
  findPendingState(ids: readonly unknown[]): Promise<PendingState[]>;
  /** Pending events of one aggregate, in aggregate order (`AGGREGATE_ORDER`), at most `limit`. */
  findPendingOfAggregate(ref: AggregateRef, limit: number): Promise<OutboxEventRecord[]>;
  /**
   * The drain's pages: pending events aggregate by aggregate (by type, then id, binary order),
   * each in aggregate order, after the event `after` of the previous page, at most `limit`.
   * A partition's store (slot range first): `limit` events with a slot in its range, each
   * preceded by the events of its aggregate written without a slot that come earlier, all
   * from one read (`withOlderUnslotted`); fewer only when the range has no more.
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
   * The sweep's scan: pending events that occurred before `olderThan` and do not wait for a
   * retry after `dueBy`, by `_id`, after `afterId`, at most `limit`.
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
  /** Count and `occurredAt` of the oldest pending event (the relay's lag). */
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
