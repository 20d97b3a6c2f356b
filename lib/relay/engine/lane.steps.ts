import type { RelayClock, RelayTimer } from '../ports/relay-clock';
import type { AggregateLane, LaneItem } from './aggregate.lane';
import type { BatchQueue } from './batch.queue';
import type { BrokerPause } from './broker.pause';
import type { DestinationHolds } from './destination.holds';
import type { HeldBackMarker } from './held-back.marker';
import type { InFlightBudget } from './in-flight.budget';
import type { LaneTable } from './lane.table';
import { RetrySchedule } from './retry.schedule';

export interface LaneStepsDeps {
  lanes: LaneTable;
  holds: DestinationHolds;
  batches: BatchQueue;
  marker: HeldBackMarker;
  budget: InFlightBudget;
  pause: BrokerPause;
  clock: RelayClock;
  /** Server-time estimate, ms. */
  now: () => number;
  closed: () => boolean;
  /** Queues a catch-up read of the lane (`CatchUpReader`). */
  read: (lane: AggregateLane) => void;
  pump: () => void;
  rescanMarks: () => void;
}

/**
 * What the engine does when a lane changes: a lane that waits gets its timer (its retry, its
 * destination's probe, the broker pause), a due one is read from the collection, a caught-up one
 * goes live or leaves memory, and a lane that waits beyond the bound is parked (see `LaneTable`).
 */
export class LaneSteps {
  private readonly retries = new RetrySchedule<string>();
  private timer?: RelayTimer;
  private timerAt = Infinity;

  constructor(private readonly deps: LaneStepsDeps) {}

  /** The lane waits for its own retry at `retryAt` (server time). */
  blockUntil(lane: AggregateLane, retryAt: number): void {
    lane.block();
    this.retries.set(lane.key, retryAt);
    this.armTimer();
  }

  /** `lane` waits for `destination`; `items` (not sent) and its queue leave memory, marked. */
  holdOn(lane: AggregateLane, destination: string, items: readonly LaneItem[]): void {
    lane.hold(destination);
    this.retries.delete(lane.key);
    this.dropQueue(lane, items);
    this.armTimer();
    this.parkIfOver(lane);
  }

  startCatchUp(lane: AggregateLane): void {
    lane.catchUp();
    this.retries.delete(lane.key);
    this.continueLane(lane);
  }

  /** Next step of a lane whose publish call, read or dead-letter step just ended. */
  continueLane(lane: AggregateLane): void {
    if (this.deps.closed() || lane.busy || lane.mode === 'blocked') return;
    if (lane.queue.length > 0) {
      this.deps.batches.add(lane);
      return;
    }
    if (lane.mode === 'catchup') {
      if (lane.reading) return;
      if (lane.more) {
        this.deps.read(lane);
        return;
      }
      lane.goLive();
      if (this.deps.holds.probeEnded(lane.key)) this.armTimer();
    }
    if (lane.ids.size === 0) this.deps.lanes.delete(lane.key);
  }

  /** Removes `items` and the lane's queued events from memory; they stay pending, marked. */
  dropQueue(lane: AggregateLane, items: readonly LaneItem[]): void {
    for (const item of lane.drop(items)) {
      this.deps.budget.release(1, item.held);
      this.deps.marker.holdBack(item.event, () => item.settles.forEach((settle) => settle()));
    }
  }

  finish(lane: AggregateLane, item: LaneItem): void {
    lane.settle(item);
    this.deps.budget.release(1, item.held);
  }

  /**
   * A lane that waits leaves memory beyond the bound (or, with `evict`, to make room; see
   * `LaneTable`); timers and holds forget it. Returns whether it did.
   */
  parkIfOver(lane: AggregateLane, evict = false): boolean {
    if (!this.deps.lanes.park(lane, evict)) return false;
    this.retries.delete(lane.key);
    if (this.deps.holds.park(lane.key)) this.armTimer();
    return true;
  }

  /**
   * Parks the lane that has waited longest for a held destination, to make room for an aggregate
   * that can publish: a waiting lane holds only a place in the table, and its aggregate is read
   * again from the collection once the hold ends (see `DestinationHolds.park`). Returns whether
   * it did.
   */
  evictWaiting(): boolean {
    const key = this.deps.holds.longestWaiting();
    const lane = key === undefined ? undefined : this.deps.lanes.get(key);
    return !!lane?.waitsForDestination && this.parkIfOver(lane, true);
  }

  /** One timer, at the earliest of: a lane's retry, a hold's probe, the end of the broker pause. */
  armTimer(): void {
    if (this.deps.closed()) return;
    const monotonicNow = this.deps.clock.monotonic();
    const serverNow = this.deps.now();
    const candidates = [this.retries.next(), this.deps.holds.nextRetryAt()]
      .filter((at): at is number => at !== undefined)
      .map((at) => at - serverNow);
    const paused = this.deps.pause.remaining(monotonicNow);
    if (paused > 0) candidates.push(paused);
    if (candidates.length === 0) return;
    const at = monotonicNow + Math.max(0, Math.min(...candidates));
    if (this.timer && at >= this.timerAt) return;
    this.timer?.cancel();
    this.timerAt = at;
    this.timer = this.deps.clock.setTimeout(() => this.onTimer(), at - monotonicNow);
  }

  /** The engine closes. */
  stop(): void {
    this.timer?.cancel();
  }

  clear(): void {
    this.retries.clear();
  }

  private onTimer(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    if (this.deps.closed()) return;
    const { lanes, holds } = this.deps;
    const now = this.deps.now();
    for (const key of this.retries.takeDue(now)) {
      const lane = lanes.get(key);
      if (lane?.waitsForRetry) this.startCatchUp(lane);
    }
    const held = holds.size;
    for (const probe of holds.dueProbes(now)) {
      const lane = lanes.get(probe.lane);
      if (lane?.waitsForDestination) this.startCatchUp(lane);
      else holds.probeEnded(probe.lane); // the timer is armed below
    }
    if (holds.size < held) this.deps.rescanMarks(); // a hold of parked aggregates only
    this.deps.pump();
    this.armTimer();
  }
}
