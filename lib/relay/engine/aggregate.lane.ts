import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import type { AggregateRef } from '../ports/outbox-relay.store';

/** Called once an event's fate is durable: acknowledged, dead-lettered, or left pending with a marker. */
export type Settle = () => void;

/** One event held in memory. */
export interface LaneItem {
  event: OutboxEventRecord;
  id: string;
  bytes: number;
  settles: Settle[];
}

/**
 * - `live`: events arrive from the stream (or the drain) in commit order and are published in
 *   that order.
 * - `blocked`: the aggregate waits, for its own retry (`retryAt`) or for a held destination
 *   (`heldBy`). Its events stay pending in the collection, each with a durable marker.
 * - `catchup`: the aggregate's pending events are read from the collection, page by page, in
 *   aggregate order; events the stream brings meanwhile are marked and read with a later page.
 */
export type LaneMode = 'live' | 'blocked' | 'catchup';

export interface AggregateLane {
  readonly key: string;
  readonly ref: AggregateRef;
  mode: LaneMode;
  /** Waiting to be published, in order. */
  queue: LaneItem[];
  /** Queued and in-flight items by id (the stream, the drain and catch-up pages overlap). */
  ids: Map<string, LaneItem>;
  /** A publish call or a dead-letter step of this aggregate is under way. */
  busy: boolean;
  inReady: boolean;
  /** While blocked for a retry: when. */
  retryAt: number;
  /** While blocked by a destination hold: which. */
  heldBy?: string;
  /** A catch-up page is being read, or queued to be read. */
  reading: boolean;
  /** Catch-up: another page is needed (the last one was full, or events arrived meanwhile). */
  more: boolean;
}

export function aggregateKey(ref: AggregateRef): string {
  return `${ref.aggregateType}\u0000${ref.aggregateId}`;
}

export function newLane(ref: AggregateRef): AggregateLane {
  return {
    key: aggregateKey(ref),
    ref: { aggregateType: ref.aggregateType, aggregateId: ref.aggregateId },
    mode: 'live',
    queue: [],
    ids: new Map(),
    busy: false,
    inReady: false,
    retryAt: 0,
    reading: false,
    more: false,
  };
}
