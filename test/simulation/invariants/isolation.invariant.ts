import { TARGETED_FAULT_KINDS } from '../schedule/schedule.types';
import type { FaultKind } from '../schedule/schedule.types';
import type { CommitFact } from '../world/sim.history';
import type { SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

const TARGETED: ReadonlySet<FaultKind> = new Set(TARGETED_FAULT_KINDS);

/** The simulated kafkajs' own retries of a request (`SimWorld`: 2 retries, 100 ms doubling). */
const KAFKAJS_RETRIES_MS = 100 + 200;

interface Window {
  from: number;
  to: number;
}

/** Where a targeted fault hits: a topic, a partition of one, or an aggregate. */
interface Target {
  window: Window;
  topic?: string;
  partition?: number;
  aggregate?: string;
  label: string;
}

/**
 * (f) Isolation: every committed event whose own path (its topic, its partition, its aggregate)
 * was not faulted is published by a deadline computed for it alone from the schedule, whatever
 * a fault on another destination or aggregate does meanwhile. Its deadline is `isolationBound`
 * after the latest of:
 * - the moment it became visible (majority-committed);
 * - the end of each global disturbance that began before the deadline (as moved so far) and
 *   ended at most lease.durationMs before it became visible: a fault not aimed at one
 *   destination or aggregate, followed by settle = lease.durationMs + lease.renewMs +
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
    const { schedule, history } = world;
    const options = schedule.options;
    const bound = isolationBound(world);
    const cost = batchCost(world);
    const probe = options.backoff.maxMs * (1 + options.backoff.jitter);
    const targets = this.targets(world);
    const global = this.globalWindows(world);
    const first = history.firstAppends();
    const committed = history.committed();
    const byAggregate = new Map<string, CommitFact[]>();
    for (const commit of committed) {
      const list = byAggregate.get(commit.aggregate) ?? [];
      list.push(commit);
      byAggregate.set(commit.aggregate, list);
    }
    for (const list of byAggregate.values())
      list.sort((a, b) => a.pos - b.pos || a.index - b.index);
    const placeOf = (commit: CommitFact): { topic: string; partition: number } | undefined => {
      for (const sibling of byAggregate.get(commit.aggregate) ?? []) {
        const append = first.get(sibling.eventId);
        if (append) return { topic: append.topic, partition: append.partition };
      }
      return undefined;
    };
    const hits = (target: Target, commit: CommitFact): boolean => {
      if (target.aggregate !== undefined) return target.aggregate === commit.aggregate;
      if (target.topic !== commit.topic) return false;
      if (target.partition === undefined) return true;
      return placeOf(commit)?.partition === target.partition;
    };
    const violations: string[] = [];
    let checked = 0;
    const deadlines = new Map<string, number>();
    const sorted = [...committed].sort(
      (a, b) =>
        (a.majorityAt as number) - (b.majorityAt as number) || a.pos - b.pos || a.index - b.index,
    );
    // The relay's queue: when the events visible so far are drained at the latest.
    let drained = 0;
    for (const commit of sorted) {
      const visible = commit.majorityAt as number;
      // Anything that begins before the deadline moves it on: iterate until nothing more does.
      const own = targets
        .filter((target) => hits(target, commit))
        .sort((a, b) => a.window.from - b.window.from);
      const mine: Target[] = [];
      const met = new Set<Window>();
      let start = visible;
      let queued = 0;
      let deadline = 0;
      for (let moved = true; moved;) {
        moved = false;
        queued =
          Math.max(drained, start) +
          cost *
            Math.max(
              1 / options.batchSize,
              commit.bytes / Math.min(options.maxBatchBytes, options.maxInFlightBytes),
            );
        deadline = queued + bound;
        // Its own path: a fault on it holds it until the fault ends and the held destination
        // is probed again.
        for (const target of own) {
          if (target.window.from > deadline) continue;
          if (!mine.includes(target)) mine.push(target);
          deadline = Math.max(deadline, target.window.to + probe + bound);
        }
        for (const sibling of byAggregate.get(commit.aggregate) ?? []) {
          if (sibling === commit) break;
          deadline = Math.max(deadline, deadlines.get(sibling.eventId) ?? 0);
        }
        for (const window of global) {
          if (met.has(window) || window.from > deadline) continue;
          if (window.to < visible - options.lease.durationMs) continue;
          met.add(window);
          if (window.to > start) {
            start = window.to;
            moved = true;
          }
        }
      }
      drained = queued;
      deadlines.set(commit.eventId, deadline);
      // Its own path was faulted while it waited: not checked (its deadline still binds the
      // later events of its aggregate).
      if (mine.some((target) => target.window.to + probe >= visible)) continue;
      if (history.deadMarked.has(commit.eventId) || commit.oversize || commit.poison) continue;
      if (deadline > world.now) continue;
      checked++;
      const published = first.get(commit.eventId)?.at;
      if (published === undefined || published > deadline) {
        const during = targets.filter(
          (target) =>
            !mine.includes(target) && target.window.from < deadline && visible < target.window.to,
        );
        violations.push(
          `${commit.eventId} (${commit.aggregate}, ${placeOf(commit)?.topic ?? commit.topic}/${placeOf(commit)?.partition ?? '?'}) ` +
            `visible at ${visible}, published ${published === undefined ? 'never' : `at ${published}`}, ` +
            `due by ${deadline} (bound ${bound} ms, queue until ${Math.round(queued)}` +
            `${mine.length > 0 ? `, own path faulted until ${Math.max(...mine.map((target) => target.window.to))}` : ''})` +
            `${during.length > 0 ? ` while ${during.map((target) => `${target.label} [${target.window.from}, ${target.window.to})`).join(', ')}` : ''}`,
        );
      }
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
  private targets(world: SimWorld): Target[] {
    const { schedule, history } = world;
    const topics = schedule.world.topics;
    const result: Target[] = [];
    const poisonEnd = Math.max(
      0,
      ...schedule.faults
        .filter((fault) => fault.kind === 'kafka-poison-event')
        .map((fault) => fault.at + fault.duration + schedule.options.backoff.maxMs),
    );
    for (const commit of history.commits.values()) {
      if (commit.majorityAt === undefined || commit.rolledBackAt !== undefined) continue;
      if (commit.poison) {
        // The broker fails the poison event's whole partition batch: its topic is disturbed.
        result.push({
          window: { from: commit.majorityAt, to: Math.max(poisonEnd, commit.majorityAt) },
          topic: commit.topic,
          label: `poison ${commit.eventId}`,
        });
      } else if (commit.oversize) {
        result.push({
          window: {
            from: commit.majorityAt,
            to: history.deadMarked.get(commit.eventId) ?? world.now,
          },
          aggregate: commit.aggregate,
          label: `oversize ${commit.eventId}`,
        });
      }
    }
    for (const fault of schedule.faults) {
      if (
        !TARGETED.has(fault.kind) ||
        fault.kind === 'kafka-oversize-event' ||
        fault.kind === 'kafka-poison-event'
      )
        continue;
      const topic = topics[fault.target % topics.length];
      const name = `sim.${topic.type}`;
      const window = { from: fault.at, to: fault.at + fault.duration };
      if (fault.kind === 'kafka-topic-missing' || fault.kind === 'kafka-topic-unauthorized') {
        result.push({ window, topic: name, label: `${fault.kind} ${name}` });
      } else {
        const partition = fault.param % Math.max(1, topic.partitions);
        result.push({
          window,
          topic: name,
          partition,
          label: `${fault.kind} ${name}/${partition}`,
        });
      }
    }
    return result;
  }

  /** Times when something global disturbs every destination. */
  private globalWindows(world: SimWorld): Window[] {
    const { schedule, history } = world;
    const options = schedule.options;
    const settle =
      options.lease.durationMs +
      options.lease.renewMs +
      options.backoff.maxMs * (1 + options.backoff.jitter);
    // A new holder catches up from the checkpoint (renewMs), after a held retry at most.
    const resume = options.lease.renewMs + options.backoff.maxMs * (1 + options.backoff.jitter);
    const windows: Window[] = [];
    for (const fault of schedule.faults) {
      if (TARGETED.has(fault.kind)) continue;
      windows.push({ from: fault.at, to: fault.at + fault.duration + settle });
    }
    for (const lease of history.leases) {
      if (lease.kind === 'acquire') windows.push({ from: lease.at - 1, to: lease.at + resume });
    }
    for (const fact of history.processes) {
      if (fact.kind !== 'start' && fact.kind !== 'join')
        windows.push({ from: fact.at, to: fact.at + settle });
    }
    return windows;
  }
}

/** See the class comment. */
export function isolationBound(world: SimWorld): number {
  const { options, world: data } = world.schedule;
  return (
    4 * options.idleMs +
    2 * options.backoff.initialMs +
    2 * KAFKAJS_RETRIES_MS +
    20 * Math.max(data.dbLatencyMs, data.kafkaLatencyMs)
  );
}

/** See the class comment. */
export function batchCost(world: SimWorld): number {
  const { world: data } = world.schedule;
  return 20 * Math.max(data.dbLatencyMs, data.kafkaLatencyMs) + 40;
}
