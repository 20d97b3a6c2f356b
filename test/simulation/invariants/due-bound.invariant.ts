import type { SimWorld } from '../world/sim-world';
import { describeLate, dueLatencyMs, eventDeadlines } from './event-deadlines';
import { capped } from './invariant';
import { majorityReachedAt } from './majority-lag';
import type { InvariantChecker, InvariantResult } from './invariant';

/**
 * (s2) Published once due: every scheduled event not cancelled (a cancellation that was rolled
 * back does not count) is published by a deadline computed for it from the schedule as (f)
 * computes one (`eventDeadlines`): from when it is ready, the later of visible (majority-
 * committed) and due by the due reader's `dueBy` (the majority time, which reaches `availableAt`
 * once everything committed by then is majority-committed: `majorityReachedAt`, from the
 * majority lag the schedule injects), + `dueLatencyMs` (the due reader's timer
 * fires by the due time it knows, within min(sweepIntervalMs, 5 s) in any case; an aggregate
 * the engine still works on is looked at again after 1 s; 4 round trips), then its turn in the
 * queue of the events ready before it (many due together drain batch by batch, so the due
 * reader's budget bounds bite), moved past every global disturbance (a crash, a stepdown, a
 * pause, a hand-over: faults stop, then settle) and not before the deadlines of the older
 * events of its aggregate it is ordered after. As in (f), events whose own topic, partition or
 * aggregate was faulted while they waited, dead-lettered, oversize or poison ones, and those
 * whose deadline falls after the run's end (left to (a)) are not judged here.
 */
export class DueBoundInvariant implements InvariantChecker {
  readonly id = 's2';
  readonly name = 'scheduled: published once due';

  finish(world: SimWorld): InvariantResult {
    const first = world.history.firstAppends();
    const violations: string[] = [];
    let checked = 0;
    let inherited = 0;
    for (const entry of eventDeadlines(world)) {
      if (entry.commit.availableAt === undefined || entry.unjudged !== undefined) continue;
      checked++;
      if (entry.commit.inherited) inherited++;
      const published = first.get(entry.commit.eventId)?.at;
      if (published === undefined || published > entry.deadline) {
        violations.push(
          describeLate(
            world,
            entry,
            `due at ${entry.commit.availableAt} (by the majority time at ${majorityReachedAt(world.schedule, entry.commit.availableAt)}, visible at ${entry.commit.majorityAt}), ready (+ ${dueLatencyMs(world)} ms)`,
          ),
        );
      }
    }
    return {
      id: this.id,
      name: this.name,
      checked,
      violations: capped(violations),
      counts: { 'scheduled events judged whose due time the order rule raised': inherited },
    };
  }
}
