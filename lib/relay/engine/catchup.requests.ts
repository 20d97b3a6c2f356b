import type { AggregateRef } from '../ports/outbox-relay.store';
import { aggregateKey } from '../../documents/outbox-event.document';
import type { DestinationHolds } from './destination.holds';
import type { LaneSteps } from './lane.steps';
import type { LaneTable } from './lane.table';

export interface CatchUpRequestsDeps {
  lanes: LaneTable;
  holds: Pick<DestinationHolds, 'waitingLanes'>;
  steps: Pick<LaneSteps, 'evictWaiting' | 'startCatchUp'>;
  /** Catch-up reads queued (the reader refuses more beyond `MAX_QUEUED_READS`). */
  readsQueued: () => number;
  closed: () => boolean;
}

/** Catch-up reads that may wait at once; more are refused (the asker comes back). */
const MAX_QUEUED_READS = 1000;
/** Aggregates that may wait for a lane at once; more are refused (the asker comes back). */
export const MAX_WAITING = 1000;

/**
 * Requests to read an aggregate from the collection (the due reader's): it gets a lane now if
 * one fits - a lane that only waits for a held destination gives its place up (it is read
 * again once the hold ends), so a held topic cannot keep the other topics' aggregates out -
 * or as soon as one leaves the table, in the order asked, instead of when the asker looks
 * again (with `maxInFlight` 1 its next pass came a second later for each aggregate). Holds
 * only the references of those waiting, at most `MAX_WAITING`.
 */
export class CatchUpRequests {
  private readonly waiting = new Map<string, AggregateRef>();
  private awaitingRoom = false;

  constructor(private readonly deps: CatchUpRequestsDeps) {}

  /** How many more `request` takes now (lanes, then places to wait for one). */
  get room(): number {
    const { lanes, holds } = this.deps;
    const lanesFree = Math.max(0, lanes.bound() - lanes.size + holds.waitingLanes);
    return lanesFree + MAX_WAITING - this.waiting.size;
  }

  /** Aggregates tracked, or waiting for a lane. */
  get busy(): number {
    return this.deps.lanes.size + this.waiting.size;
  }

  isTracked(ref: AggregateRef): boolean {
    const key = aggregateKey(ref);
    return this.deps.lanes.has(key) || this.waiting.has(key);
  }

  /** False when the aggregate is tracked already or too many wait. */
  request(ref: AggregateRef): boolean {
    if (this.deps.closed() || this.deps.readsQueued() >= MAX_QUEUED_READS) return false;
    if (this.isTracked(ref)) return false;
    if (this.start(ref)) return true;
    if (this.waiting.size >= MAX_WAITING) return false;
    this.waiting.set(aggregateKey(ref), { ...ref });
    this.awaitRoom();
    return true;
  }

  clear(): void {
    this.waiting.clear();
  }

  private start(ref: AggregateRef): boolean {
    const { lanes, steps } = this.deps;
    const lane =
      lanes.admit(ref, false) ?? (steps.evictWaiting() ? lanes.admit(ref, false) : undefined);
    if (!lane) return false;
    steps.startCatchUp(lane);
    return true;
  }

  private awaitRoom(): void {
    if (this.awaitingRoom || this.waiting.size === 0) return;
    this.awaitingRoom = true;
    void this.deps.lanes.room().then(() => {
      this.awaitingRoom = false;
      if (this.deps.closed()) {
        this.waiting.clear();
        return;
      }
      const [key, ref] = this.waiting.entries().next().value as [string, AggregateRef];
      // Tracked meanwhile (the stream brought one of its events): its lane reads it.
      if (this.deps.lanes.has(key) || this.start(ref)) this.waiting.delete(key);
      this.awaitRoom();
    });
  }
}
