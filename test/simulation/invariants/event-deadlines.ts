import { eventMemoryBytes } from '../../../lib/relay/engine/event-memory';
import { KAFKA_CLIENT_FAULT_KINDS, TARGETED_FAULT_KINDS } from '../schedule/schedule.types';
import type { FaultKind } from '../schedule/schedule.types';
import type { CommitFact } from '../world/sim.history';
import type { SimWorld } from '../world/sim-world';
import { majorityReachedAt } from './majority-lag';

/** Partitions added to a topic disturb that topic (its producer's metadata lags), nothing else. */
const TARGETED: ReadonlySet<FaultKind> = new Set([
  ...TARGETED_FAULT_KINDS,
  ...KAFKA_CLIENT_FAULT_KINDS,
]);

/** The simulated kafkajs' own retries of a request (`SimWorld`: 2 retries, 100 ms doubling). */
const KAFKAJS_RETRIES_MS = 100 + 200;

interface Window {
  from: number;
  to: number;
}

/** Where a targeted fault hits: a topic, a partition of one, or an aggregate. */
export interface Target {
  window: Window;
  topic?: string;
  partition?: number;
  aggregate?: string;
  label: string;
}

/** One committed event's deadline, as (f) and (s2) compute it (see `IsolationInvariant`). */
export interface EventDeadline {
  commit: CommitFact;
  /**
   * When it may start: visible (majority-committed); a scheduled one also due by the majority
   * time (`majorityReachedAt` its `availableAt`) + `dueLatencyMs`.
   */
  ready: number;
  deadline: number;
  /** When its turn in the queue ends at the latest. */
  queued: number;
  /** Faults on its own path met before its deadline. */
  mine: Target[];
  /** Why it is not judged (own path faulted while it waited, dead, refused, deadline after the end). */
  unjudged?: string;
}

/**
 * How long after an event is due (and visible) the due reader hands it to the engine at the
 * latest (lib/relay/scheduled/due.reader.ts): its timer is set for the earliest due time it
 * knows and fires within `recheckMs` (min(sweepIntervalMs, 5 s)) in any case; an aggregate the
 * engine works on is looked at again after 1 s; plus a pass' reads (server time, due
 * aggregates, next due time) and the catch-up read: 4 round trips.
 */
export function dueLatencyMs(world: SimWorld): number {
  const { options, world: data } = world.schedule;
  return Math.min(options.sweepIntervalMs, 5_000) + DUE_PASS_MS + 8 * data.dbLatencyMs;
}

/** The due reader's next pass while the engine has no room for more aggregates (due.reader.ts). */
const DUE_PASS_MS = 1_000;

/**
 * Every committed event's deadline (see `IsolationInvariant`): a scheduled event is ready once
 * visible and due by the due reader's `dueBy` (the majority time: it reaches the event's
 * `availableAt` once everything committed by then is majority-committed, `majorityReachedAt`,
 * from the majority lag the schedule injects), + `dueLatencyMs`, and takes its turn in the
 * queue by when it is ready; a
 * cancelled one (`history.cancelled()`) has none and takes no turn. An event's deadline is not
 * before those of the older events of its aggregate it is ordered after (all of them; for one
 * emitted with `waitForScheduled: false`, those not scheduled). Scheduled events also queue for
 * the due reader: a pass starts at most `maxInFlight` aggregates (the engine's room) and, while
 * the engine is full, the next pass comes 1 s later; so each aggregate that becomes due (again:
 * more than 1 s after its last due event) costs 1 s / `maxInFlight` in that queue. The stream
 * reads a scheduled event once it is visible, before it is due: that read takes a turn in the
 * relay's queue then, as one event of a publish call (a transaction of hundreds of scheduled
 * events holds back the events committed after it while the stream reads through it).
 */
export function eventDeadlines(world: SimWorld): EventDeadline[] {
  const { schedule, history } = world;
  const options = schedule.options;
  const bound = isolationBound(world);
  const cost = batchCost(world);
  const dueLatency = dueLatencyMs(world);
  const probe = options.backoff.maxMs * (1 + options.backoff.jitter);
  const targets = targetsOf(world);
  const global = globalWindows(world);
  const first = history.firstAppends();
  const cancelled = history.cancelled();
  const committed = history.committed().filter((commit) => !cancelled.has(commit.eventId));
  const byAggregate = new Map<string, CommitFact[]>();
  for (const commit of committed) {
    const list = byAggregate.get(commit.aggregate) ?? [];
    list.push(commit);
    byAggregate.set(commit.aggregate, list);
  }
  for (const list of byAggregate.values()) list.sort((a, b) => a.pos - b.pos || a.index - b.index);
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
  const readyOf = (commit: CommitFact): number =>
    commit.availableAt === undefined
      ? (commit.majorityAt as number)
      : Math.max(commit.majorityAt as number, majorityReachedAt(schedule, commit.availableAt)) +
        dueLatency;
  const result: EventDeadline[] = [];
  const deadlines = new Map<string, number>();
  const sorted = [...committed].sort(
    (a, b) => readyOf(a) - readyOf(b) || a.pos - b.pos || a.index - b.index,
  );
  // The change stream reads a scheduled event when it becomes visible, long before it is due:
  // its turn in the stream's queue then (as an event's in one publish call), in visible order.
  const streamReads = committed
    .filter((commit) => commit.availableAt !== undefined)
    .map((commit) => commit.majorityAt as number)
    .sort((a, b) => a - b);
  let nextRead = 0;
  // The relay's queue: when the events ready so far are drained at the latest.
  let drained = 0;
  // The due reader's: when the aggregates due so far are started at the latest.
  let passed = 0;
  const lastDue = new Map<string, number>();
  for (const commit of sorted) {
    let visible = readyOf(commit);
    for (; nextRead < streamReads.length && streamReads[nextRead] <= visible; nextRead++)
      drained = Math.max(drained, streamReads[nextRead]) + cost / options.batchSize;
    if (commit.availableAt !== undefined) {
      const last = lastDue.get(commit.aggregate);
      if (last === undefined || visible - last > DUE_PASS_MS)
        passed = Math.max(passed, visible) + DUE_PASS_MS / options.maxInFlight;
      lastDue.set(commit.aggregate, visible);
      visible = Math.max(visible, passed);
    }
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
            commit.bytes / options.maxBatchBytes,
            eventMemoryBytes(commit.bytes) / options.maxInFlightBytes,
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
        if (commit.exempt && sibling.availableAt !== undefined) continue;
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
    let unjudged: string | undefined;
    // Its own path was faulted while it waited: not checked (its deadline still binds the
    // later events of its aggregate).
    if (mine.some((target) => target.window.to + probe >= visible)) unjudged = 'own path faulted';
    else if (history.deadMarked.has(commit.eventId)) unjudged = 'dead';
    else if (commit.oversize || commit.poison) unjudged = 'refused by the broker';
    else if (deadline > world.now) unjudged = 'deadline after the end';
    else if (commit.database && world.tenants?.excuse(commit))
      unjudged = `its tenant database was ${world.tenants.excuse(commit)}`;
    else if (commit.database && !world.tenants?.listedSince(commit.database, visible))
      // A database listed later is followed within a sweep interval and drained (a): its
      // events have no turn in this queue.
      unjudged = 'its tenant database not listed all along';
    result.push({ commit, ready: visible, deadline, queued, mine, unjudged });
  }
  return result;
}

/** A missed deadline: when the event was ready, published, due, and what faulted meanwhile. */
export function describeLate(world: SimWorld, entry: EventDeadline, what: string): string {
  const { commit, ready, deadline, queued, mine } = entry;
  const first = world.history.firstAppends();
  let place = `${commit.topic}/?`;
  for (const sibling of world.history.committed()) {
    const append = sibling.aggregate === commit.aggregate ? first.get(sibling.eventId) : undefined;
    if (append) {
      place = `${append.topic}/${append.partition}`;
      break;
    }
  }
  const published = first.get(commit.eventId)?.at;
  const during = targetsOf(world).filter(
    (target) =>
      !mine.some((own) => own.label === target.label && own.window.from === target.window.from) &&
      target.window.from < deadline &&
      ready < target.window.to,
  );
  return (
    `${commit.eventId} (${commit.aggregate}, ${place}) ` +
    `${what} at ${ready}, published ${published === undefined ? 'never' : `at ${published}`}, ` +
    `due by ${deadline} (bound ${isolationBound(world)} ms, queue until ${Math.round(queued)}` +
    `${mine.length > 0 ? `, own path faulted until ${Math.max(...mine.map((target) => target.window.to))}` : ''})` +
    `${during.length > 0 ? ` while ${during.map((target) => `${target.label} [${target.window.from}, ${target.window.to})`).join(', ')}` : ''}`
  );
}

/** The targeted faults of the run, and the poison and oversize events' own disturbances. */
export function targetsOf(world: SimWorld): Target[] {
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
    if (
      fault.kind === 'kafka-topic-missing' ||
      fault.kind === 'kafka-topic-unauthorized' ||
      fault.kind === 'kafka-partitions-added'
    ) {
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
function globalWindows(world: SimWorld): Window[] {
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
    windows.push({ from: fault.at, to: fault.at + fault.duration + lingers(fault) + settle });
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

/**
 * How long after its window a delaying fault still holds what began inside it: an ack the broker
 * sent at its end arrives `param` later (`slow-ack`); a database call issued then is slowed
 * going and answering (`db-slow`, twice `param`, as the world's quiet time counts it).
 */
function lingers(fault: { kind: FaultKind; param: number }): number {
  if (fault.kind === 'slow-ack') return fault.param;
  if (fault.kind === 'db-slow') return 2 * fault.param;
  return 0;
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
