import fc from 'fast-check';
import { eventMemoryBytes } from '../../lib/relay/engine/event-memory';
import { CancelledInvariant } from './invariants/cancelled.invariant';
import { CheckpointSafetyInvariant } from './invariants/checkpoint-safety.invariant';
import { DueBoundInvariant } from './invariants/due-bound.invariant';
import { DuplicatesInvariant } from './invariants/duplicates.invariant';
import { FencingInvariant } from './invariants/fencing.invariant';
import type { InvariantChecker, InvariantResult } from './invariants/invariant';
import { IsolationInvariant } from './invariants/isolation.invariant';
import { LivenessInvariant } from './invariants/liveness.invariant';
import { MemoryInvariant } from './invariants/memory.invariant';
import { NoSilentStopInvariant } from './invariants/no-silent-stop.invariant';
import { NotBeforeDueInvariant } from './invariants/not-before-due.invariant';
import { OrderInvariant } from './invariants/order.invariant';
import { PartitionsInvariant } from './invariants/partitions.invariant';
import { PublishedStoredInvariant } from './invariants/published-stored.invariant';
import { SimContractInvariant } from './invariants/ports-only.invariant';
import { scheduleArbitrary } from './schedule/schedule.arbitrary';
import type { Schedule } from './schedule/schedule.types';
import type { RelayFactory } from './world/relay-under-test';
import { SimWorld } from './world/sim-world';
import type { SimMonitor, SimRunOutcome } from './world/sim-world';
import type { SimHistory } from './world/sim.history';

/**
 * Counts, once per run, whether a relay reached its memory bounds: `maxInFlight` events held,
 * or held bytes within one event (the largest committed, in memory: `eventMemoryBytes`) of `maxInFlightBytes`. Read from the
 * relays' status for the summary only; no invariant decides on it.
 */
export class BoundsMonitor implements SimMonitor {
  private events = false;
  private bytes = false;
  private largestEvent = 0;
  private commitsSeen = 0;

  afterStep(world: SimWorld): void {
    if (this.events && this.bytes) return;
    const { maxInFlight, maxInFlightBytes } = world.schedule.options;
    if (world.history.commits.size !== this.commitsSeen) {
      this.commitsSeen = world.history.commits.size;
      for (const commit of world.history.commits.values())
        this.largestEvent = Math.max(this.largestEvent, eventMemoryBytes(commit.bytes));
    }
    for (const { status } of world.statuses()) {
      if (!this.events && status.inFlight.events >= maxInFlight) {
        this.events = true;
        world.history.countEffect('reached maxInFlight');
      }
      if (!this.bytes && status.inFlight.bytes + this.largestEvent >= maxInFlightBytes) {
        this.bytes = true;
        world.history.countEffect('reached maxInFlightBytes');
      }
    }
  }
}

/** Every invariant, fresh for one run. */
export function invariantCheckers(): InvariantChecker[] {
  return [
    new LivenessInvariant(),
    new PublishedStoredInvariant(),
    new OrderInvariant(),
    new CheckpointSafetyInvariant(),
    new MemoryInvariant(),
    new DuplicatesInvariant(),
    new IsolationInvariant(),
    new FencingInvariant(),
    new NoSilentStopInvariant(),
    new SimContractInvariant(),
    new PartitionsInvariant(),
    new NotBeforeDueInvariant(),
    new DueBoundInvariant(),
    new CancelledInvariant(),
  ];
}

export interface RunReport {
  schedule: Schedule;
  outcome: SimRunOutcome;
  results: InvariantResult[];
  failed: InvariantResult[];
  history: SimHistory;
  trace: readonly string[];
}

/** Runs one schedule against the relay `factory` builds and checks every invariant. */
export async function runSchedule(
  schedule: Schedule,
  factory: RelayFactory,
  options: { keepTrace?: boolean; checkers?: InvariantChecker[] } = {},
): Promise<RunReport> {
  const world = new SimWorld(schedule, factory, { keepTrace: options.keepTrace });
  const checkers = options.checkers ?? invariantCheckers();
  for (const checker of checkers) world.addMonitor(checker);
  world.addMonitor(new BoundsMonitor());
  const outcome = await world.run();
  const results = checkers.map((checker) => checker.finish(world, outcome));
  return {
    schedule,
    outcome,
    results,
    failed: results.filter((result) => result.violations.length > 0),
    history: world.history,
    trace: world.trace.lines,
  };
}

/** Totals over many runs. */
export class SimStats {
  runs = 0;
  failedRuns = 0;
  steps = 0;
  virtualMs = 0;
  events = 0;
  readonly faults = new Map<string, number>();
  readonly effects = new Map<string, number>();
  /** Runs in which each effect happened at least once (e.g. `reached maxInFlight`). */
  readonly runsWith = new Map<string, number>();
  /** Runs whose stored layout changed to another number of partitions than they began with. */
  layoutSwitchRuns = 0;
  readonly invariants = new Map<string, { name: string; checked: number; failedRuns: number }>();
  readonly counts = new Map<string, number>();

  add(report: RunReport): void {
    this.runs++;
    if (report.failed.length > 0) this.failedRuns++;
    this.steps += report.outcome.steps;
    this.virtualMs += report.outcome.endedAt;
    this.events += report.history.commits.size;
    addAll(this.faults, report.history.faults);
    addAll(this.effects, report.history.effects);
    for (const [kind, count] of report.history.effects)
      if (count > 0) this.runsWith.set(kind, (this.runsWith.get(kind) ?? 0) + 1);
    const began = report.schedule.options.partitions ?? 1;
    if (report.history.layoutSwitches.some((change) => change.partitions !== began))
      this.layoutSwitchRuns++;
    for (const result of report.results) {
      const entry = this.invariants.get(result.id) ?? {
        name: result.name,
        checked: 0,
        failedRuns: 0,
      };
      entry.checked += result.checked;
      if (result.violations.length > 0) entry.failedRuns++;
      this.invariants.set(result.id, entry);
      for (const [key, value] of Object.entries(result.counts ?? {})) {
        const name = `(${result.id}) ${key}`;
        this.counts.set(
          name,
          key.startsWith('max ')
            ? Math.max(this.counts.get(name) ?? 0, value)
            : (this.counts.get(name) ?? 0) + value,
        );
      }
    }
  }
}

function addAll(into: Map<string, number>, from: Map<string, number>): void {
  for (const [key, value] of from) into.set(key, (into.get(key) ?? 0) + value);
}

/** A failed run seen in `keepGoing` mode (not shrunk). */
export interface SeenFailure {
  path: string;
  failed: InvariantResult[];
}

export interface CheckResult {
  stats: SimStats;
  /** With `keepGoing`: every failed run (not shrunk), in order. */
  seen: SeenFailure[];
  /** Runs made while shrinking a failure (not in `stats`). */
  shrinkRuns: number;
  failure?: {
    seed: number;
    path: string;
    schedule: Schedule;
    report: RunReport;
    replay: string;
  };
}

/** The command that replays one failing schedule. */
export function replayCommand(seed: number, path: string): string {
  return `npm run simulate -- --seed ${seed} --path ${path}`;
}

/**
 * Runs `runs` schedules generated from `seed` (fast-check), or replays the one at `path`;
 * on a failure, shrinks it (unless `shrink` is false) and reports the smallest schedule found.
 */
const DEFAULT_SHRINK_LIMIT_MS = 60_000;

export async function checkSchedules(options: {
  runs: number;
  seed: number;
  path?: string;
  factory: RelayFactory;
  shrink?: boolean;
  /** Run every schedule even after failures (no shrinking); failures are listed in `seen`. */
  keepGoing?: boolean;
  /** Judge only these invariants (ids, e.g. `['a', 'f']`): shrinks toward a failure of theirs. */
  only?: readonly string[];
  onRun?: (report: RunReport, stats: SimStats) => void;
  /** The schedules (default `scheduleArbitrary`; `partitionedScheduleArbitrary` for partitioned runs). */
  arbitrary?: fc.Arbitrary<Schedule>;
  /**
   * Wall-clock ms shrinking may take once a failure is found (default `SIM_SHRINK_MS` or 60 s);
   * past it, the smallest failing schedule found so far is reported.
   */
  shrinkTimeLimitMs?: number;
}): Promise<CheckResult> {
  const shrinkLimit =
    options.shrinkTimeLimitMs ?? (Number(process.env.SIM_SHRINK_MS) || DEFAULT_SHRINK_LIMIT_MS);
  let failedAt = 0;
  const stats = new SimStats();
  const seen: SeenFailure[] = [];
  let failedOnce = false;
  let shrinkRuns = 0;
  let last: RunReport | undefined;
  const property = fc.asyncProperty(options.arbitrary ?? scheduleArbitrary, async (schedule) => {
    // Past the shrink budget, every further candidate counts as passing without a run: the
    // last failing schedule stays the answer.
    if (failedOnce && Date.now() - failedAt > shrinkLimit) return;
    const full = await runSchedule(schedule, options.factory);
    const only = options.only;
    const report = only
      ? { ...full, failed: full.failed.filter((result) => only.includes(result.id)) }
      : full;
    if (failedOnce) shrinkRuns++;
    else stats.add(report);
    options.onRun?.(report, stats);
    if (report.failed.length === 0) return;
    if (options.keepGoing) {
      seen.push({ path: String(stats.runs - 1), failed: report.failed });
      return;
    }
    if (!failedOnce) {
      failedAt = Date.now();
      // Said at once, before shrinking: a failure is never hidden behind a long shrink.
      process.stderr.write(
        `[simulation] run ${stats.runs - 1} (seed ${options.seed}) broke an invariant; shrinking for at most ${Math.round(shrinkLimit / 1000)} s:\n` +
          `${describeFailure(report)}\n`,
      );
    }
    failedOnce = true;
    last = report;
    throw new Error(describeFailure(report));
  });
  const details = await fc.check(property, {
    // A path names one schedule (and its shrinking steps): replay that one only.
    numRuns: options.path === undefined ? options.runs : 1,
    seed: options.seed,
    path: options.path,
    endOnFailure: options.shrink === false,
  });
  if (!details.failed || !details.counterexample || details.counterexamplePath === null) {
    return { stats, shrinkRuns, seen };
  }
  const [schedule] = details.counterexample;
  const report =
    last && last.schedule === schedule ? last : await runSchedule(schedule, options.factory);
  return {
    stats,
    shrinkRuns,
    seen,
    failure: {
      seed: details.seed,
      path: details.counterexamplePath,
      schedule,
      report,
      replay: replayCommand(details.seed, details.counterexamplePath),
    },
  };
}

/** The violations of a failed run, one invariant per line. */
export function describeFailure(report: RunReport): string {
  return report.failed
    .map(
      (result) =>
        `(${result.id}) ${result.name}: ${result.violations.length} violation(s)\n` +
        result.violations.map((violation) => `    - ${violation}`).join('\n'),
    )
    .join('\n');
}
