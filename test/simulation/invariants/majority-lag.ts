import type { Fault, Schedule } from '../schedule/schedule.types';

/**
 * When, at the latest, everything committed by `time` is majority-committed, from the majority
 * lag the schedule injects (sim-world.ts: a commit at t is majority-committed by
 * t + lag(t), lag(t) = up to `world.majorityLagMs` + the highest active `slow-majority` param +
 * the stall before a `stepdown` with a param; commits are majority-committed in oplog order):
 * sup over t <= time of t + lag(t). The relay's majority time (`SimDatabase.majorityDate`, the
 * due reader's `dueBy`) reaches `time` by then.
 */
export function majorityReachedAt(schedule: Schedule, time: number): number {
  const slow = schedule.faults.filter((fault) => fault.kind === 'slow-majority');
  const stalls = schedule.faults.filter((fault) => fault.kind === 'stepdown' && fault.param > 0);
  // t + lag(t) is non-decreasing between the windows' bounds: its sup on each piece is at the
  // piece's end (or at `time`).
  const bounds = [
    ...slow.flatMap((fault) => [fault.at, fault.at + fault.duration]),
    ...stalls.flatMap((fault) => [fault.at - fault.param, fault.at]),
  ].filter((bound) => bound <= time);
  const starts = [Number.NEGATIVE_INFINITY, ...bounds].sort((a, b) => a - b);
  let latest = time;
  for (const start of starts) {
    const end = Math.min(time, ...bounds.filter((bound) => bound > start));
    latest = Math.max(latest, end + slowParam(slow, start) + stallAt(stalls, start, end));
  }
  return latest + schedule.world.majorityLagMs;
}

/** The highest param of the `slow-majority` faults active at `at`. */
function slowParam(slow: readonly Fault[], at: number): number {
  return slow.reduce(
    (max, fault) =>
      fault.at <= at && at < fault.at + fault.duration ? Math.max(max, fault.param) : max,
    0,
  );
}

/** The stall added at `end` by the stepdowns whose stall window holds `start` (sim-world.ts). */
function stallAt(stalls: readonly Fault[], start: number, end: number): number {
  return stalls.reduce(
    (max, fault) =>
      fault.at - fault.param <= start && start < fault.at ? Math.max(max, fault.at - end + 1) : max,
    0,
  );
}
