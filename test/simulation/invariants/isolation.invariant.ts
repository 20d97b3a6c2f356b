import type { SimWorld } from '../world/sim-world';
import { describeLate, eventDeadlines } from './event-deadlines';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/**
 * (f) Isolation: every committed event whose own path (its topic, its partition, its aggregate)
 * was not faulted is published by a deadline computed for it alone from the schedule, whatever
 * a fault on another destination or aggregate does meanwhile. Its deadline is `isolationBound`
 * after the latest of:
 * - the moment it became visible (majority-committed);
 * - the end of each global disturbance that began before the deadline (as moved so far) and
 *   ended at most lease.durationMs before it became visible: a fault not aimed at one
 *   destination or aggregate, followed by the delay it still puts on what began inside it (a
 *   `slow-ack`'s param, twice a `db-slow`'s) and settle = lease.durationMs + lease.renewMs +
 *   backoff.maxMs x (1 + jitter); a crash, stop or pause of a relay process, followed by settle;
 *   a lease acquisition, followed by lease.renewMs + backoff.maxMs x (1 + jitter);
 * - its turn in the relay's queue: the events visible before it (every one, faulted or not)
 *   drain one after the other, each from the later of the previous one's turn and its own
 *   start, each costing `batchCost` x max(1 / batchSize, its bytes / the smaller of
 *   maxBatchBytes and maxInFlightBytes): a burst of N events ahead of it delays it by
 *   N / batchSize batches (fewer events per batch when they are large);
 * and not before the deadlines of the older events of its aggregate (commit order).
 * A fault on its own path that began before the deadline moves the deadline to the fault's end
 * + backoff.maxMs x (1 + jitter) (the held destination's probe) + `isolationBound`; if such a
 * fault ended no earlier than that probe time before the event became visible, the event is not
 * checked (its deadline still binds the later events of its aggregate). Neither are events
 * dead-lettered, oversize or poison ones, nor those whose deadline falls after the run's end
 * (left to (a)). So a fault on one destination or aggregate that delays the others (every
 * destination paused, a shared queue blocked) is caught on the first event due meanwhile.
 * Also: no event is dead-lettered that the broker did not refuse on its own (too large, or the
 * poison event itself).
 *
 * `isolationBound` = 4 idle reads + 2 x backoff.initialMs + 2 x 300 ms (the simulated kafkajs'
 * own retries of a mixed request, twice) + 20 one-way latencies; `batchCost` (one batch read,
 * sent and marked) = 20 one-way latencies + 40 ms.
 */
export class IsolationInvariant implements InvariantChecker {
  readonly id = 'f';
  readonly name = 'isolation';

  finish(world: SimWorld): InvariantResult {
    const { history } = world;
    const first = history.firstAppends();
    const violations: string[] = [];
    let checked = 0;
    // Scheduled events are judged by (s2), on the same deadlines.
    for (const entry of eventDeadlines(world)) {
      if (entry.commit.availableAt !== undefined || entry.unjudged !== undefined) continue;
      checked++;
      const published = first.get(entry.commit.eventId)?.at;
      if (published === undefined || published > entry.deadline)
        violations.push(describeLate(world, entry, 'visible'));
    }
    for (const [eventId, at] of history.deadMarked) {
      const commit = history.commits.get(eventId);
      if (!commit || commit.oversize || commit.poison) continue;
      violations.push(
        `${eventId} (${commit.aggregate}) was dead-lettered at ${at}, though the broker never refused it on its own ` +
          `(it shared a failing batch or destination with another event)`,
      );
    }
    return { id: this.id, name: this.name, checked, violations: capped(violations) };
  }
}

export { batchCost, isolationBound } from './event-deadlines';
