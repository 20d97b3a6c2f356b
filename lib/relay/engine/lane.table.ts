import type { AggregateRef } from '../ports/outbox-relay.store';
import { aggregateKey } from '../../documents/outbox-event.document';
import { AggregateLane } from './aggregate.lane';
import { UntrackedMarks } from './untracked-marks';

/**
 * The engine's lanes, bounded. Lanes that hold events are bounded by the in-flight budget.
 * Lanes that hold none (an aggregate waiting for its retry, for a held destination, or for a
 * catch-up read) are kept only while there are at most `bound()` lanes; beyond that the
 * aggregate is parked: its lane leaves memory and it is noted in `untracked` (its events stay
 * pending in the collection, each with a marker; the sweep and the rescan of the marks read it
 * again). So the table holds at most 2 x `bound()` lanes (`maxInFlight`), whatever the number
 * of aggregates that wait.
 */
export class LaneTable {
  private readonly lanes = new Map<string, AggregateLane>();
  /** Aggregates with marked events in the collection and no lane here. */
  readonly untracked = new UntrackedMarks();
  private roomWaiters: Array<() => void> = [];

  constructor(readonly bound: () => number) {}

  get size(): number {
    return this.lanes.size;
  }

  get(key: string): AggregateLane | undefined {
    return this.lanes.get(key);
  }

  has(key: string): boolean {
    return this.lanes.has(key);
  }

  /** The lane of `ref`, created if needed: for events about to be held in memory. */
  laneOf(ref: AggregateRef): AggregateLane {
    const key = aggregateKey(ref);
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = new AggregateLane(ref);
      this.lanes.set(key, lane);
    }
    return lane;
  }

  /**
   * The lane of `ref` for an aggregate that holds no event in memory yet (it waits or is read
   * from the collection), or undefined when there is no room. With `marked`, the aggregate has
   * marked events: it is then noted as untracked.
   */
  admit(ref: AggregateRef, marked: boolean): AggregateLane | undefined {
    const key = aggregateKey(ref);
    const lane = this.lanes.get(key);
    if (lane) return lane;
    if (this.lanes.size < this.bound()) return this.laneOf(ref);
    if (marked) this.untracked.add(key);
    return undefined;
  }

  /**
   * Parks `lane` when it holds nothing (no event, no call or read under way) and there are more
   * lanes than the bound (or, with `evict`, to make room for another). Returns whether it did;
   * the caller forgets the lane's timers and holds.
   */
  park(lane: AggregateLane, evict = false): boolean {
    if (!evict && this.lanes.size <= this.bound()) return false;
    if (this.lanes.get(lane.key) !== lane) return false;
    if (!lane.empty) return false;
    this.lanes.delete(lane.key);
    this.untracked.add(lane.key);
    this.wake();
    return true;
  }

  /** Resolves once a lane fits under the bound (or waiting stops: the engine closes). */
  room(): Promise<void> {
    if (this.lanes.size < this.bound()) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  delete(key: string): void {
    this.lanes.delete(key);
    this.wake();
  }

  /** Ends every wait for room (the engine closes). */
  stopWaiting(): void {
    this.wake(true);
  }

  clear(): void {
    this.lanes.clear();
    this.wake(true);
  }

  private wake(all = false): void {
    while (this.roomWaiters.length > 0 && (all || this.lanes.size < this.bound())) {
      (this.roomWaiters.shift() as () => void)();
      if (!all) return; // the woken one takes the room; the next lane that leaves wakes another
    }
  }
}
