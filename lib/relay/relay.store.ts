import type { OutboxEventRecord } from '../common/envelope';
import type { LeaseGrant } from './lease.tracker';

/** An outbox document without its body (`payload`, `headers`). */
export type PendingState = Omit<OutboxEventRecord, 'payload' | 'headers'>;

/** One aggregate: the unit of ordering. */
export interface AggregateRef {
  aggregateType: string;
  aggregateId: string;
}

export interface FailureRecord {
  /** Attempts including this one. */
  attempts: number;
  nextAttemptAt: Date;
  error: string;
  at: Date;
}

export interface DeadLetterRecord {
  /** `max-attempts`: retried until `maxAttempts`; `rejected`: the broker will never accept it. */
  reason: 'max-attempts' | 'rejected';
  error: string;
  attempts: number;
  at: Date;
}

/**
 * An aggregate's events in order: by `sequence` when the write side stamps one
 * (`aggregateSequence`: commit order), then by `_id` (insertion order within one process).
 */
export const AGGREGATE_ORDER = { sequence: 1, _id: 1 } as const;

/**
 * What the relay reads and writes in the outbox collection. The MongoDB implementation is
 * `MongoRelayStore`; unit specs use an in-memory one. All reads return `pending` events only.
 */
export interface OutboxRelayStore {
  /**
   * The pending ones among these `_id`s (any order), without `payload` and `headers`: the
   * change events that named them carry those already.
   */
  findPendingState(ids: readonly unknown[]): Promise<PendingState[]>;
  /** Pending events of one aggregate, in aggregate order (`AGGREGATE_ORDER`), at most `limit`. */
  findPendingOfAggregate(ref: AggregateRef, limit: number): Promise<OutboxEventRecord[]>;
  /**
   * The drain's pages: pending events that occurred at or before `until`, aggregate by
   * aggregate (by type, then id), each in aggregate order, after the event `after` of the
   * previous page, at most `limit`.
   */
  findPendingPage(
    after: OutboxEventRecord | undefined,
    until: Date,
    limit: number,
  ): Promise<OutboxEventRecord[]>;
  /** Aggregates whose events wait for a retry (a pending event has `nextAttemptAt`), earliest retry time. */
  findRetryingAggregates(limit: number): Promise<Array<AggregateRef & { retryAt: Date }>>;
  /** Aggregates with an event pending since before `before` and not waiting for a retry after `now`. */
  findStaleAggregates(before: Date, now: Date, limit: number): Promise<AggregateRef[]>;
  markPublished(ids: readonly unknown[], at: Date): Promise<void>;
  recordFailure(event: OutboxEventRecord, failure: FailureRecord): Promise<void>;
  /** Copies the event with its error history to the dead-letter collection, then removes it from the outbox. */
  deadLetter(event: OutboxEventRecord, record: DeadLetterRecord): Promise<void>;
  pendingStats(): Promise<{ count: number; oldestOccurredAt?: Date }>;
}

/** The relay's own state: resume token checkpoint and leader lease, in `collections.relayState`. */
export interface RelayStateStore {
  /** Takes the lease if free, expired, or already ours; increments the fencing number. */
  acquireLease(owner: string, expiresAt: Date, now: Date): Promise<LeaseGrant | undefined>;
  /** Extends our lease; false when it is no longer ours (owner or fencing changed). */
  renewLease(owner: string, fencing: number, expiresAt: Date): Promise<boolean>;
  /** Lets another instance take over at once (sets expiry to now). */
  releaseLease(owner: string, fencing: number): Promise<void>;
  loadCheckpoint(): Promise<{ token: unknown; savedAt: Date } | undefined>;
  /**
   * Writes the resume token unless a newer leader (higher fencing number) wrote one:
   * false means this instance lost the lease and must stop.
   */
  saveCheckpoint(token: unknown, fencing: number, at: Date): Promise<boolean>;
  clearCheckpoint(fencing: number): Promise<void>;
}
