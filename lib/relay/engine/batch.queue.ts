import type { ResolvedRelayOptions } from '../relay.options';
import type { AggregateLane, LaneItem } from './aggregate.lane';

export interface BatchEntry {
  lane: AggregateLane;
  items: LaneItem[];
}

export type BatchLimits = Pick<ResolvedRelayOptions, 'batchSize' | 'maxBatchBytes'>;

/**
 * Batching: the lanes with events ready to publish, in the order they became ready, and the
 * batches taken from them (each lane's events in order; a lane is in at most one call at once).
 */
export class BatchQueue {
  private ready: AggregateLane[] = [];

  constructor(private readonly limits: BatchLimits) {}

  get size(): number {
    return this.ready.length;
  }

  /** `lane` has queued events and no call under way: it joins the queue (once). */
  add(lane: AggregateLane): void {
    if (!lane.inReady && lane.publishable) {
      lane.inReady = true;
      this.ready.push(lane);
    }
  }

  /**
   * Up to `batchSize` events and `maxBatchBytes` (one event may exceed it alone), lane by lane.
   * `heldBy` names the held destination an item may not be sent to; `onHeld` then stops its lane.
   */
  take(
    heldBy: (lane: AggregateLane, item: LaneItem) => string | undefined,
    onHeld: (lane: AggregateLane, destination: string) => void,
  ): BatchEntry[] {
    const { batchSize, maxBatchBytes } = this.limits;
    const entries: BatchEntry[] = [];
    let count = 0;
    let bytes = 0;
    while (this.ready.length > 0 && count < batchSize) {
      const lane = this.ready[0];
      if (!lane.publishable) {
        this.ready.shift();
        lane.inReady = false;
        continue;
      }
      const items: LaneItem[] = [];
      let full = false;
      while (lane.queue.length > 0 && count < batchSize) {
        const item = lane.queue[0];
        if (count > 0 && bytes + item.bytes > maxBatchBytes) {
          full = true;
          break;
        }
        const held = heldBy(lane, item);
        if (held !== undefined) {
          onHeld(lane, held);
          break;
        }
        items.push(lane.queue.shift() as LaneItem);
        count++;
        bytes += item.bytes;
      }
      if (items.length > 0) {
        lane.busy = true;
        entries.push({ lane, items });
      }
      if (full && items.length === 0) break; // the lane stays first for the next batch
      this.ready.shift();
      lane.inReady = false;
      if (full) break;
    }
    return entries;
  }

  clear(): void {
    this.ready = [];
  }
}
