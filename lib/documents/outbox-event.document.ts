import type { mongo, Types } from 'mongoose';
import type { OutboxEventInput } from './outbox-event.envelope';

/**
 * How many slots the aggregates are hashed into. Fixed forever: the slot is stored on every
 * outbox document at emit time, and relay partitions are contiguous ranges of slots, so the
 * number of partitions can change without rewriting a document.
 */
export const SLOT_COUNT = 4096;

export const OUTBOX_COLLECTION = 'outbox'; // the option's default

/**
 * Lifecycle of one outbox document. `pending` documents are never removed by cleanup;
 * `cancelled`: a scheduled event cancelled before it was due (never published).
 */
export const OUTBOX_EVENT_STATUSES = ['pending', 'published', 'cancelled'] as const;
export type OutboxEventStatus = (typeof OUTBOX_EVENT_STATUSES)[number];

/** One document of the outbox collection: the envelope plus what the relay needs. */
export interface OutboxEventRecord extends OutboxEventInput {
  _id: Types.ObjectId;
  /** Unique, time-ordered (UUIDv7). The dedupe key of consumers. */
  eventId: string;
  occurredAt: Date;
  status: OutboxEventStatus;
  /**
   * Position of the event in its aggregate (1, 2, 3, ...), in commit order; only with the
   * `aggregateSequence` option. Sent as the `ce_sequence` header.
   */
  sequence?: number;
  /**
   * `eventSlot(aggregateType, aggregateId)` (0..4095), stamped at emit time: relay partitions
   * are slot ranges. Missing on events written before slots existed.
   */
  slot?: number;
  /**
   * With the `tenants` option: the tenant the event was emitted for (resolved at emit time). The
   * document is in the outbox of `databaseOf(tenant)`; several tenants may share one database.
   * Sent as the `ce_tenant` header.
   */
  tenant?: string;
  /**
   * Scheduled events only: the earliest time, by the MongoDB server's clock, at which the relay
   * may publish the event. Set by the write side from the emit's `availableAt` or `delayMs`,
   * and raised to the latest `availableAt` of the aggregate's pending scheduled events (so a
   * later event of an aggregate waits behind an earlier delayed one) unless the emit says
   * `waitForScheduled: false`. An event that has it is published by the relay's due reader,
   * never from the change stream; absent: published as soon as it is committed.
   */
  availableAt?: Date;
  /** Set with status `cancelled` (a scheduled event cancelled before it was due). */
  cancelledAt?: Date;
  /** Publish attempts so far (relay). */
  attempts: number;
  /** Earliest time of the next attempt after a failure (relay backoff). */
  nextAttemptAt?: Date;
  /** Last publish error (relay). */
  lastError?: string;
  /** Set when the broker acknowledged; the retention TTL index counts from here. */
  publishedAt?: Date;
}

/** A new outbox row, as the write side inserts it. */
export type NewOutboxEvent = Omit<OutboxEventRecord, '_id'>;

/** One entry of an outbox document's `errorHistory` (the last 20 are kept). */
export interface PublishErrorEntry {
  at: Date;
  attempt: number;
  error: string;
}

/** Why and when the relay gave up on an event: `deadLetter` of an event marked dead. */
export interface DeadLetterRecord {
  /** `max-attempts`: retried until `maxAttempts`; `rejected`: the broker will never accept it. */
  reason: 'max-attempts' | 'rejected';
  error: string;
  attempts: number;
  at: Date;
}

/** The outbox document as the relay writes it: the event plus relay bookkeeping. */
export type OutboxDoc = Omit<OutboxEventRecord, 'status'> & {
  status: OutboxEventStatus | 'dead';
  errorHistory?: PublishErrorEntry[];
  /** The fencing number of the last relay leader that wrote this document. */
  relayFence?: number;
  /** Set with status `dead`, until the move to the dead-letter collection finishes. */
  deadLetter?: DeadLetterRecord;
};

/** An event marked dead in the outbox, waiting to be copied to the dead-letter collection. */
export type MarkedDead = OutboxEventRecord &
  Required<Pick<OutboxDoc, 'deadLetter'>> &
  Pick<OutboxDoc, 'errorHistory'>;

/**
 * An aggregate's events in order: by `sequence` when the write side stamps one
 * (`aggregateSequence`: commit order), then by `_id` (insertion order within one process).
 */
export const AGGREGATE_ORDER = { sequence: 1, _id: 1 } as const;

/** An aggregate, by its type and id. */
export interface AggregateRef {
  aggregateType: string;
  aggregateId: string;
}
type Positioned = { sequence?: number; _id: unknown };

/**
 * `AGGREGATE_ORDER` in memory: `sequence` (a missing one first, as MongoDB sorts it), then `_id`
 * (an ObjectId's hex string sorts as its bytes).
 */
export function inAggregateOrder(a: Positioned, b: Positioned): number {
  const sa = a.sequence ?? Number.NEGATIVE_INFINITY;
  const sb = b.sequence ?? Number.NEGATIVE_INFINITY;
  if (sa !== sb) return sa < sb ? -1 : 1;
  return byString(String(a._id), String(b._id));
}

/** `BY_AGGREGATE` in memory: by type, then id (binary string order, as MongoDB). */
export function compareAggregates(a: AggregateRef, b: AggregateRef): number {
  return byString(a.aggregateType, b.aggregateType) || byString(a.aggregateId, b.aggregateId);
}

/** `DRAIN_ORDER` in memory: aggregate by aggregate, each in `AGGREGATE_ORDER`. */
export function inDrainOrder(a: AggregateRef & Positioned, b: AggregateRef & Positioned): number {
  return compareAggregates(a, b) || inAggregateOrder(a, b);
}

function byString(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

/** An aggregate's key in maps and sets: its type and id, apart by a character neither holds. */
export function aggregateKey(ref: AggregateRef): string {
  return `${ref.aggregateType}\u0000${ref.aggregateId}`;
}

/** The drain's order: aggregate by aggregate; a relay partition's: slot first (one index range). */
export const BY_AGGREGATE = { aggregateType: 1, aggregateId: 1 } as const;
export const DRAIN_ORDER = { ...BY_AGGREGATE, ...AGGREGATE_ORDER } as const;
export const SLOT_DRAIN_ORDER = { slot: 1, ...DRAIN_ORDER } as const;

/** The write side's index (the schema's, created with `createIndexes`). */
export const OUTBOX_EVENT_ID_INDEX = {
  key: { eventId: 1 },
  unique: true,
  name: 'outbox_event_id_unique',
} as const satisfies mongo.IndexDescription;

/**
 * The write side's read of an aggregate's pending scheduled events (the order rule across
 * delays: a new event waits for the latest `availableAt` of its aggregate). Partial: it holds
 * only pending events that have `availableAt`, so it stays as small as what is scheduled.
 * Created by the writer's `ensureIndexes` (the schema's second index).
 */
export const OUTBOX_SCHEDULED_BY_AGGREGATE_INDEX = {
  key: { aggregateType: 1, aggregateId: 1, availableAt: 1 },
  name: 'outbox_scheduled_by_aggregate',
  partialFilterExpression: { status: 'pending', availableAt: { $exists: true } },
} as const satisfies mongo.IndexDescription;

/**
 * Pending events that are not scheduled: what can be published now. The relay's recurring reads
 * (the sweep, the lag, the pending count) filter on it and go by `_id` on
 * `outbox_relay_status_due` (`{ status: 1, availableAt: 1, _id: 1 }`). MongoDB bounds a missing
 * field on a non-sparse index to the point `[null, null]` and fetches to tell missing from null
 * (the outbox never stores null there); after two points the index gives the `_id` order, with
 * no sort stage. So these reads never touch a scheduled event, however many are waiting
 * (MongoDB manual: `$exists`, "Query for Null or Missing Fields", and "Use Indexes to Sort
 * Query Results": an equality prefix then the sort key). The index it replaces,
 * `outbox_relay_pending` (`{ status: 1, _id: 1 }`), made each of them scan every scheduled event.
 */
export const PUBLISHABLE_NOW = { status: 'pending', availableAt: { $exists: false } } as const;
const PENDING = { status: 'pending' };
const MARKED = { status: 'pending', nextAttemptAt: { $exists: true } };
const SCHEDULED = { status: 'pending', availableAt: { $exists: true } };
/**
 * The due reader's order: scheduled events by due time, then aggregate (so that the events of
 * one aggregate due at one time, a run, lie together and the reader seeks past a run in one
 * step: `DueAggregatesCollector`), then `_id`.
 */
export const DUE_RUN_ORDER = { availableAt: 1, ...BY_AGGREGATE, _id: 1 } as const;
const partial = (key: Record<string, 1>, name: string, filter: object) =>
  ({ key, name, partialFilterExpression: filter }) as const;

/**
 * The relay's indexes: events by status, then due time, then `_id` (the sweep, the lag and the
 * pending count: `PUBLISHABLE_NOW`, by `_id`), by aggregate (catch-up, drain),
 * marked events by aggregate (start-up), scheduled events by due time (the due reader; it holds
 * only pending events with `availableAt`, so its size is the number waiting), the retention TTLs
 * on `publishedAt` and `cancelledAt` (pending events have neither, so cleanup never removes them). With
 * `partitions > 1` only, the same by slot first (a partition's reads); partial on
 * `status: 'pending'`, so a published or cancelled event leaves them.
 */
export const RELAY_OUTBOX_INDEXES = {
  statusDue: { key: { status: 1, availableAt: 1, _id: 1 }, name: 'outbox_relay_status_due' },
  aggregateOrder: partial(DRAIN_ORDER, 'outbox_relay_aggregate_order', PENDING),
  marked: partial(BY_AGGREGATE, 'outbox_relay_marked', MARKED),
  slotOrder: partial(SLOT_DRAIN_ORDER, 'outbox_relay_slot_order', PENDING),
  slotMarked: partial({ slot: 1, ...BY_AGGREGATE }, 'outbox_relay_slot_marked', MARKED),
  scheduled: partial(DUE_RUN_ORDER, 'outbox_relay_due_runs', SCHEDULED),
  slotScheduled: partial({ slot: 1, ...DUE_RUN_ORDER }, 'outbox_relay_slot_due_runs', SCHEDULED),
  retention: { key: { publishedAt: 1 }, name: 'outbox_relay_retention' },
  /** The same retention for cancelled scheduled events (only they have `cancelledAt`). */
  cancelledRetention: { key: { cancelledAt: 1 }, name: 'outbox_cancelled_retention' },
} as const satisfies Record<string, mongo.IndexDescription>;
