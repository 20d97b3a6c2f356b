import type { AggregateRef } from '../ports/outbox-relay.store';
import { aggregateKey } from './aggregate.lane';
import type { LaneTable } from './lane.table';

export interface WaitingCatchUpsDeps {
  lanes: LaneTable;
  /** Starts catching `ref` up; false when no lane fits (it then waits again). */
  start: (ref: AggregateRef) => boolean;
  closed: () => boolean;
}

/** Aggregates that may wait for a lane at once; more are refused (the asker comes back). */
export const MAX_WAITING_CATCHUPS = 1000;

/**
 * Aggregates asked to be caught up (the due reader's) while the lane table was full: each
 * takes a lane as soon as one leaves, in the order asked, instead of when the asker looks
 * again (with `maxInFlight` 1, its next pass came a second later for each aggregate). Holds
 * only their references, at most `MAX_WAITING_CATCHUPS`.
 */
export class WaitingCatchUps {
  private readonly refs = new Map<string, AggregateRef>();
  private waiting = false;

  constructor(private readonly deps: WaitingCatchUpsDeps) {}

  get size(): number {
    return this.refs.size;
  }

  get room(): number {
    return MAX_WAITING_CATCHUPS - this.refs.size;
  }

  has(key: string): boolean {
    return this.refs.has(key);
  }

  /** Waits for a lane for `ref`; false when too many wait. */
  add(ref: AggregateRef): boolean {
    const key = aggregateKey(ref);
    if (this.refs.has(key)) return true;
    if (this.refs.size >= MAX_WAITING_CATCHUPS) return false;
    this.refs.set(key, { aggregateType: ref.aggregateType, aggregateId: ref.aggregateId });
    this.next();
    return true;
  }

  clear(): void {
    this.refs.clear();
  }

  private next(): void {
    if (this.waiting || this.refs.size === 0) return;
    this.waiting = true;
    void this.deps.lanes.room().then(() => {
      this.waiting = false;
      if (this.deps.closed()) {
        this.refs.clear();
        return;
      }
      const [key, ref] = this.refs.entries().next().value as [string, AggregateRef];
      // Tracked meanwhile (the stream brought one of its events): its lane reads it.
      if (this.deps.lanes.has(key) || this.deps.start(ref)) this.refs.delete(key);
      this.next();
    });
  }
}
