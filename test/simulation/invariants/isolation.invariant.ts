import { TARGETED_FAULT_KINDS } from '../schedule/schedule.types';
import type { FaultKind } from '../schedule/schedule.types';
import type { CommitFact } from '../world/sim.history';
import type { SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

const TARGETED: ReadonlySet<FaultKind> = new Set(TARGETED_FAULT_KINDS);

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
 * (f) Isolation: while a fault hits one destination (a partition, a topic) or one aggregate
 * (an event the broker rejects), an event bound elsewhere is published by its deadline: within
 * `isolationBound` of becoming visible, or of the end of whatever global disturbance was
 * around then (any other fault, a crash, a pause, a leader change; each followed by
 * lease.durationMs + lease.renewMs + backoff.maxMs to settle), and not before the older events
 * of its aggregate are due. Checked only while the targeted fault lasts past that deadline.
 * Also: no event is dead-lettered that the broker did not refuse on its own (too large, or
 * the poison event itself).
 *
 * `isolationBound` = 4 idle reads + 2 x backoff.initialMs + 1.5 s (kafkajs' own retries of
 * a mixed request) + 40 one-way latencies.
 */
export class IsolationInvariant implements InvariantChecker {
  readonly id = 'f';
  readonly name = 'isolation';

  finish(world: SimWorld): InvariantResult {
    const { schedule, history } = world;
    const options = schedule.options;
    const bound = isolationBound(world);
    const targets = this.targets(world);
    if (targets.length === 0) return { id: this.id, name: this.name, checked: 0, violations: [] };
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
    // When each event should be out at the latest: `bound` after it became visible, or after
    // the global disturbances around that moment ended, and not before the older events of its
    // aggregate (commit order).
    const deadlines = new Map<string, number>();
    const sorted = [...committed].sort((a, b) => a.pos - b.pos || a.index - b.index);
    for (const commit of sorted) {
      const visible = commit.majorityAt as number;
      let start = visible;
      for (const window of global) {
        if (window.from <= visible + bound && visible - options.lease.durationMs <= window.to) {
          start = Math.max(start, window.to);
        }
      }
      let deadline = start + bound;
      for (const sibling of byAggregate.get(commit.aggregate) ?? []) {
        if (sibling === commit) break;
        deadline = Math.max(deadline, deadlines.get(sibling.eventId) ?? 0);
      }
      deadlines.set(commit.eventId, deadline);
    }
    for (const commit of sorted) {
      const visible = commit.majorityAt as number;
      const deadline = deadlines.get(commit.eventId) as number;
      const during = targets.find(
        (target) => target.window.from <= visible && deadline <= target.window.to,
      );
      if (!during) continue;
      if (targets.some((target) => hits(target, commit))) continue;
      if (history.deadMarked.has(commit.eventId)) continue;
      checked++;
      const published = first.get(commit.eventId)?.at;
      if (published === undefined || published > deadline) {
        violations.push(
          `${commit.eventId} (${commit.aggregate}, ${placeOf(commit)?.topic ?? commit.topic}/${placeOf(commit)?.partition ?? '?'}) ` +
            `visible at ${visible}, published ${published === undefined ? 'never' : `at ${published}`}, ` +
            `due by ${deadline} (bound ${bound} ms) while ${during.label} [${during.window.from}, ${during.window.to})`,
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
    const settle = options.lease.durationMs + options.lease.renewMs + options.backoff.maxMs;
    const windows: Window[] = [];
    for (const fault of schedule.faults) {
      if (TARGETED.has(fault.kind)) continue;
      windows.push({ from: fault.at, to: fault.at + fault.duration + settle });
    }
    for (const lease of history.leases) {
      if (lease.kind === 'acquire') windows.push({ from: lease.at - 1, to: lease.at + settle });
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
    1500 +
    40 * Math.max(data.dbLatencyMs, data.kafkaLatencyMs)
  );
}
