import { aggregateKey, type OutboxEventRecord } from '../../documents/outbox-event.document';
import type { AggregateRef } from '../ports/outbox-relay.store';
import { eventMemoryBytes } from './event-memory';

/** Called once an event's fate is durable: acknowledged, dead-lettered, or left pending with a marker. */
export type Settle = () => void;

/** One event held in memory. */
export interface LaneItem {
  event: OutboxEventRecord;
  id: string;
  /** Its size on the wire (the publisher's `sizeOf`): what counts towards `maxBatchBytes`. */
  bytes: number;
  /** What it costs in memory (`eventMemoryBytes`): what the in-flight budget is charged. */
  held: number;
  settles: Settle[];
}

/** The item of `event`, of `bytes` on the wire. */
export function laneItem(
  event: OutboxEventRecord,
  id: string,
  bytes: number,
  settles: Settle[],
): LaneItem {
  return { event, id, bytes, held: eventMemoryBytes(bytes), settles };
}

/**
 * - `live`: events arrive from the stream (or the drain) in commit order and are published in
 *   that order.
 * - `blocked`: the aggregate waits, for its own retry or for a held destination. Its
 *   events stay pending in the collection, each with a durable marker.
 * - `catchup`: the aggregate's pending events are read from the collection, page by page, in
 *   aggregate order; events the stream brings meanwhile are marked and read with a later page.
 */
export type LaneMode = 'live' | 'blocked' | 'catchup';

/** One aggregate's events in memory and where it stands; its mode changes only through its transitions. */
export class AggregateLane {
  readonly key: string;
  readonly ref: AggregateRef;
  private current: LaneMode = 'live';
  private destination?: string;
  /** Waiting to be published, in order. */
  queue: LaneItem[] = [];
  /** Queued and in-flight items by id (the stream, the drain and catch-up pages overlap). */
  readonly ids = new Map<string, LaneItem>();
  /** A publish call or a dead-letter step of this aggregate is under way. */
  busy = false;
  inReady = false;
  /** A catch-up page is being read, or queued to be read. */
  reading = false;
  /** Catch-up: another page is needed (the last one was full, or events arrived meanwhile). */
  more = false;

  constructor(ref: AggregateRef) {
    this.key = aggregateKey(ref);
    this.ref = { aggregateType: ref.aggregateType, aggregateId: ref.aggregateId };
  }

  get mode(): LaneMode {
    return this.current;
  }

  get waitsForRetry(): boolean {
    return this.current === 'blocked' && this.destination === undefined;
  }

  get waitsForDestination(): boolean {
    return this.current === 'blocked' && this.destination !== undefined;
  }

  /** Queued events and no call under way: it can go into a batch. */
  get publishable(): boolean {
    return !this.busy && this.current !== 'blocked' && this.queue.length > 0;
  }

  /** Holds nothing: no event, no call or read under way (it may leave memory). */
  get empty(): boolean {
    return !this.busy && !this.reading && this.ids.size === 0 && this.queue.length === 0;
  }

  /** Waits for its own retry. */
  block(): void {
    this.current = 'blocked';
    this.destination = undefined;
  }

  /** Waits for `destination` to accept events again. */
  hold(destination: string): void {
    this.current = 'blocked';
    this.destination = destination;
  }

  /** Reads its pending events from the collection, page by page. */
  catchUp(): void {
    this.current = 'catchup';
    this.destination = undefined;
    this.more = true;
  }

  /** Caught up: takes events from the stream again. */
  goLive(): void {
    this.current = 'live';
  }

  add(item: LaneItem): void {
    this.queue.push(item);
    this.ids.set(item.id, item);
  }

  /** `item`'s fate is decided: it no longer counts as held here. */
  settle(item: LaneItem): void {
    this.ids.delete(item.id);
  }

  /** Puts `items` back at the head of the queue (not sent). */
  requeue(items: readonly LaneItem[]): void {
    this.queue.unshift(...items);
  }

  /** Removes `items` and the queue from memory; returns them (they stay pending, marked). */
  drop(items: readonly LaneItem[]): LaneItem[] {
    const dropped = [...items, ...this.queue];
    for (const item of dropped) this.ids.delete(item.id);
    this.queue = [];
    return dropped;
  }
}
