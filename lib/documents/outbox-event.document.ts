import type { mongo, Types } from 'mongoose';
import type { OutboxEventInput } from '../common/envelope';

/** Default of `collections.outbox`. */
export const OUTBOX_COLLECTION = 'outbox';

/** Lifecycle of one outbox document. `pending` documents are never removed by cleanup. */
export const OUTBOX_EVENT_STATUSES = ['pending', 'published'] as const;
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

/**
 * An aggregate's events in order: by `sequence` when the write side stamps one
 * (`aggregateSequence`: commit order), then by `_id` (insertion order within one process).
 */
export const AGGREGATE_ORDER = { sequence: 1, _id: 1 } as const;

/** The drain order of a relay partition's reads: slot first, one index range per partition. */
export const SLOT_DRAIN_ORDER = {
  slot: 1,
  aggregateType: 1,
  aggregateId: 1,
  ...AGGREGATE_ORDER,
} as const;

/** The write side's index (the schema's, created with `createIndexes`). */
export const OUTBOX_EVENT_ID_INDEX = {
  key: { eventId: 1 },
  unique: true,
  name: 'outbox_event_id_unique',
} as const satisfies mongo.IndexDescription;

const PENDING = { status: 'pending' };
const MARKED = { status: 'pending', nextAttemptAt: { $exists: true } };

/**
 * The relay's indexes: pending events by `_id` (sweep, stats), by aggregate (catch-up, drain),
 * marked events by aggregate (start-up) and the retention TTL on `publishedAt` (pending events
 * have none, so cleanup never removes them; `expireAfterSeconds` is the option's).
 *
 * With `partitions > 1`, also the partitions' slot-range reads (`slot`): pending events by slot
 * then aggregate (drain pages, counts), marked events by slot then aggregate (start-up). Both
 * are partial on `status: 'pending'`, so a published event leaves them.
 */
export const RELAY_OUTBOX_INDEXES = {
  pending: { key: { status: 1, _id: 1 }, name: 'outbox_relay_pending' },
  aggregateOrder: {
    key: { aggregateType: 1, aggregateId: 1, ...AGGREGATE_ORDER },
    name: 'outbox_relay_aggregate_order',
    partialFilterExpression: PENDING,
  },
  marked: {
    key: { aggregateType: 1, aggregateId: 1 },
    name: 'outbox_relay_marked',
    partialFilterExpression: MARKED,
  },
  slotOrder: {
    key: SLOT_DRAIN_ORDER,
    name: 'outbox_relay_slot_order',
    partialFilterExpression: PENDING,
  },
  slotMarked: {
    key: { slot: 1, aggregateType: 1, aggregateId: 1 },
    name: 'outbox_relay_slot_marked',
    partialFilterExpression: MARKED,
  },
  retention: { key: { publishedAt: 1 }, name: 'outbox_relay_retention' },
} as const satisfies Record<string, mongo.IndexDescription>;
