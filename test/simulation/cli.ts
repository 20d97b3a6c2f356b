/**
 * `npm run simulate -- [--runs N] [--seed S] [--path P] [--verbose] [--no-shrink] [--shrink]
 *   [--keep-going] [--only a,f] [--schedule FILE] [--toy] [--partitioned | --partitions N]`
 *
 * Runs N schedules of the relay simulation (fast-check, seed S; default 1000 runs, a seed from
 * the time), or replays one (`--seed S --path P`, as printed for a failure). Prints runs,
 * faults injected by kind, what they did, each invariant's result, duplicates by cause and
 * timing; for a failure, the shrunk schedule, its violations and the command that replays it,
 * then exits 1. `--verbose` prints the trace of the failing (or replayed) run. `--keep-going`
 * runs all N schedules whatever fails (no shrinking) and lists the failures grouped by kind,
 * each with the command that replays it. `--only a,f` judges only those invariants (to shrink
 * toward a failure of theirs); `--shrink` shrinks a replayed path further; `--schedule FILE`
 * replays a schedule saved as JSON (as printed for a failure). `--partitioned` runs partitioned
 * schedules (2-8 partitions, 2-3 relays that join, leave, die and pause, layout switches);
 * `--partitions N` the same with N partitions. `--graceful-stops` runs graceful stops under load
 * (a backlog drained, publishes in flight, relays stopped and restarted), `--hand-overs`
 * partitioned hand-overs with publishes in flight (a relay joins, relays leave). `--scheduled`
 * runs single-lease schedules of which one in three has scheduled and cancelled events; with
 * `--partitioned`, `--partitions N`, `--graceful-stops` or `--hand-overs`, that family's
 * schedules built on those. `--idempotent` runs single-lease schedules with
 * `relay.kafka.idempotent`, ambiguous acknowledgements and partitions added to topics
 * (`idempotent.arbitrary.ts`). `--help` prints this.
 */
import { readFileSync } from 'node:fs';
import type fc from 'fast-check';
import type { Schedule } from './schedule/schedule.types';
import { checkSchedules, describeFailure, replayCommand, runSchedule } from './simulation.runner';
import type { RunReport, SeenFailure, SimStats } from './simulation.runner';
import { partitionedSchedules } from './schedule/partitioned.arbitrary';
import {
  gracefulStopSchedules,
  handOverSchedules,
  scheduledGracefulStopSchedules,
  scheduledHandOverSchedules,
} from './schedule/stop-under-load.arbitrary';
import { scheduledScheduleArbitrary } from './schedule/schedule.arbitrary';
import { idempotentScheduleArbitrary } from './schedule/idempotent.arbitrary';
import { PROOF_FAMILIES } from './schedule/proof.families';
import { ToyRelay } from './toy/toy.relay';
import type { RelayFactory } from './world/relay-under-test';
import { realRelay } from './world/relay.factory';

const USAGE = `npm run simulate -- [--runs N] [--seed S] [--path P] [--verbose] [--no-shrink] [--shrink]
  [--keep-going] [--only a,f] [--schedule FILE] [--toy]
  [--partitioned | --partitions N] [--graceful-stops | --hand-overs] [--scheduled] [--idempotent]
  [--family NAME]

  --runs N, --seed S     N schedules from seed S (default 1000, a seed from the time)
  --seed S --path P      replay one schedule, as printed for a failure (--shrink: shrink it further)
  --schedule FILE        replay a schedule saved as JSON (test/simulation/findings/*.json)
  --verbose              print the trace of the failing or replayed run
  --keep-going           run all N whatever fails, list the failures by kind (no shrinking)
  --only a,f             judge only these invariants
  --toy                  the toy relay (test/simulation/toy) instead of lib/'s
  --partitioned          partitioned schedules, 2-8 partitions (--partitions N: N)
  --graceful-stops       graceful stops under load; --hand-overs: hand-overs with publishes in flight
  --scheduled            scheduled and cancelled events (alone or with the three above)
  --idempotent           relay.kafka.idempotent, ambiguous acks, partitions added to topics
  --family NAME          one of issue 35's families (schedule/proof.families.ts)
  --help                 this`;

interface CliArgs {
  runs: number;
  seed: number;
  path?: string;
  verbose: boolean;
  shrink: boolean;
  /** Shrink also a replayed path (`--shrink`): from one known failure to a smaller one. */
  shrinkPath: boolean;
  keepGoing: boolean;
  only?: string[];
  /** A schedule as JSON (printed for every failure): replayed as is. */
  schedule?: string;
  toy: boolean;
  /** Partitioned schedules: 0 for 2-8 partitions (`--partitioned`), else N (`--partitions N`). */
  partitions?: number;
  /** Stops under load (`--graceful-stops`) or hand-overs with publishes in flight (`--hand-overs`). */
  stops?: 'graceful-stops' | 'hand-overs';
  /** The scheduled-events family (`--scheduled`). */
  scheduled?: boolean;
  /** The idempotent-producer family (`--idempotent`). */
  idempotent?: boolean;
  /** One of issue 35's families (`--family NAME`, `PROOF_FAMILIES`). */
  family?: string;
}

function parseArgs(argv: string[]): CliArgs {
  const args: CliArgs = {
    runs: 1000,
    seed: Math.floor(Date.now() % 0x7fffffff),
    verbose: false,
    shrink: true,
    shrinkPath: false,
    keepGoing: false,
    toy: false,
  };
  for (let index = 0; index < argv.length; index++) {
    const flag = argv[index];
    const value = (): string => {
      const next = argv[++index];
      if (next === undefined) throw new Error(`${flag} needs a value`);
      return next;
    };
    if (flag === '--runs') args.runs = positiveInt(flag, value());
    else if (flag === '--seed') args.seed = Number.parseInt(value(), 10);
    else if (flag === '--path') args.path = value();
    else if (flag === '--verbose') args.verbose = true;
    else if (flag === '--no-shrink') args.shrink = false;
    else if (flag === '--shrink') args.shrinkPath = true;
    else if (flag === '--keep-going') args.keepGoing = true;
    else if (flag === '--only') args.only = value().split(',');
    else if (flag === '--schedule') args.schedule = value();
    else if (flag === '--toy') args.toy = true;
    else if (flag === '--partitioned') args.partitions = 0;
    else if (flag === '--partitions') args.partitions = positiveInt(flag, value());
    else if (flag === '--scheduled') args.scheduled = true;
    else if (flag === '--idempotent') args.idempotent = true;
    else if (flag === '--family') args.family = value();
    else if (flag === '--help' || flag === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else if (flag === '--graceful-stops' || flag === '--hand-overs')
      args.stops = flag === '--graceful-stops' ? 'graceful-stops' : 'hand-overs';
    else throw new Error(`unknown option ${flag} (see test/simulation/cli.ts)`);
  }
  if (!Number.isInteger(args.seed)) throw new Error('--seed must be an integer');
  return args;
}

/** The flags a replay command needs besides seed and path. */
function flags(args: CliArgs): string {
  const partitioned =
    args.partitions === undefined
      ? ''
      : args.partitions === 0
        ? ' --partitioned'
        : ` --partitions ${args.partitions}`;
  const family = `${args.stops ? ` --${args.stops}` : ''}${args.scheduled ? ' --scheduled' : ''}${args.idempotent ? ' --idempotent' : ''}`;
  const proof = args.family ? ` --family ${args.family}` : '';
  return `${args.toy ? ' --toy' : ''}${partitioned}${family}${proof}`;
}

/** The schedules to generate, and their name in the report. */
function scheduleKind(args: CliArgs): { name: string; arbitrary?: fc.Arbitrary<Schedule> } {
  if (args.family !== undefined) {
    const arbitrary = PROOF_FAMILIES[args.family];
    if (
      !arbitrary ||
      args.stops ||
      args.partitions !== undefined ||
      args.scheduled ||
      args.idempotent
    )
      throw new Error(
        `--family takes one of ${Object.keys(PROOF_FAMILIES).join(', ')}, and no other family flag`,
      );
    return { name: `family ${args.family}`, arbitrary };
  }
  if (args.idempotent) {
    if (args.stops || args.partitions !== undefined || args.scheduled)
      throw new Error('--idempotent runs single-lease schedules only (no other family flag)');
    return { name: 'single lease, idempotent producer', arbitrary: idempotentScheduleArbitrary };
  }
  const scheduled = args.scheduled ? ' with scheduled events' : '';
  if (args.stops === 'graceful-stops') {
    return {
      name: `graceful stops under load${scheduled}`,
      arbitrary: args.scheduled ? scheduledGracefulStopSchedules : gracefulStopSchedules,
    };
  }
  if (args.stops === 'hand-overs') {
    return {
      name: `hand-overs with publishes in flight${scheduled}`,
      arbitrary: args.scheduled ? scheduledHandOverSchedules : handOverSchedules,
    };
  }
  if (args.partitions !== undefined) {
    return {
      name: `partitioned (${args.partitions === 0 ? '2-8' : args.partitions} partitions)${scheduled}`,
      arbitrary: partitionedSchedules(
        args.partitions === 0 ? undefined : args.partitions,
        args.scheduled ? scheduledScheduleArbitrary : undefined,
      ),
    };
  }
  if (args.scheduled) {
    return { name: 'single lease with scheduled events', arbitrary: scheduledScheduleArbitrary };
  }
  return { name: 'single lease' };
}

function positiveInt(flag: string, text: string): number {
  const value = Number.parseInt(text, 10);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${flag} must be a positive integer`);
  return value;
}

const out = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};

function table(title: string, entries: Iterable<[string, number]>): void {
  const rows = [...entries].sort(([a], [b]) => a.localeCompare(b));
  out(`${title}:`);
  if (rows.length === 0) out('  (none)');
  for (const [name, value] of rows) out(`  ${name.padEnd(34)} ${value}`);
}

/** Effects listed even when no run had them (the bounds, and what the issue-19 faults do). */
const ALWAYS_COUNTED = [
  'reached maxInFlight',
  'reached maxInFlightBytes',
  'publish call full by maxBatchBytes',
  'request over 80% of the broker limit',
  'request-too-large',
  'rolled-back-event',
  'db-timeout',
  'crash-in-timer',
  'clock-drift',
];

function printStats(stats: SimStats, elapsedMs: number): void {
  out(`runs: ${stats.runs} (${stats.failedRuns} failed)`);
  out(
    `events committed: ${stats.events}, scheduler steps: ${stats.steps}, virtual time: ${(stats.virtualMs / 1000).toFixed(0)} s`,
  );
  out(
    `wall time: ${(elapsedMs / 1000).toFixed(1)} s (${(elapsedMs / Math.max(1, stats.runs)).toFixed(1)} ms per run)`,
  );
  if (stats.layoutSwitchRuns > 0)
    out(`layout switched to another partition count in ${stats.layoutSwitchRuns} runs`);
  table('faults injected (planned, by kind)', stats.faults);
  table('what they did (operations failed, positions lost, events rolled back...)', stats.effects);
  const runsWith = new Map(stats.runsWith);
  for (const kind of ALWAYS_COUNTED) runsWith.set(kind, runsWith.get(kind) ?? 0);
  table(
    `runs in which it happened (of ${stats.runs}; bounds reached, rollbacks, timeouts...)`,
    runsWith,
  );
  out('invariants:');
  for (const [id, entry] of [...stats.invariants].sort(([a], [b]) => a.localeCompare(b))) {
    out(
      `  (${id}) ${entry.name.padEnd(36)} checked ${String(entry.checked).padStart(9)}   failed runs ${entry.failedRuns}`,
    );
  }
  table('counts (duplicates by cause, memory high-water marks, late writes)', stats.counts);
}

/** Failures of a `--keep-going` run, grouped by invariant and message shape (numbers elided). */
function printSeen(seen: SeenFailure[], args: CliArgs): void {
  const groups = new Map<string, string[]>();
  for (const failure of seen) {
    for (const result of failure.failed) {
      const first = result.violations[0] ?? '';
      const shape = `(${result.id}) ${first
        .replace(/evt-[0-9a-f-]+/g, 'evt')
        .replace(/[A-Z][a-z]+\/[WA0-9]+/g, 'T/A')
        .replace(/[0-9]+/g, '#')
        .replace(/\{[^}]*\}/g, '{.}')
        .replace(/\([^)]*\)/g, '(.)')
        .slice(0, 140)}`;
      const list = groups.get(shape) ?? [];
      list.push(
        `${replayCommand(args.seed, failure.path)}${flags(args)}   # ${first.slice(0, 240)}`,
      );
      groups.set(shape, list);
    }
  }
  out();
  out(`FAILED: ${seen.length} run(s). By kind:`);
  for (const [shape, list] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    out(`${shape}  [${list.length} run(s)]`);
    for (const line of list.slice(0, 3)) out(`    ${line}`);
  }
}

function printTrace(report: RunReport): void {
  out('trace:');
  for (const line of report.trace) out(`  ${line}`);
}

/** `--schedule FILE`: runs one schedule given as JSON, prints its violations (and trace). */
async function replaySchedule(args: CliArgs, factory: RelayFactory): Promise<number> {
  const schedule = JSON.parse(readFileSync(args.schedule as string, 'utf8')) as Schedule;
  const report = await runSchedule(schedule, factory, { keepTrace: args.verbose });
  out(
    `Replaying the schedule in ${args.schedule}: ${report.outcome.steps} steps, ended at ${report.outcome.endedAt} ms`,
  );
  if (args.verbose) printTrace(report);
  const failed = args.only
    ? report.failed.filter((result) => args.only?.includes(result.id))
    : report.failed;
  if (failed.length === 0) {
    out('all invariants held');
    return 0;
  }
  out(describeFailure({ ...report, failed }));
  return 1;
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const factory: RelayFactory = args.toy ? (ports) => new ToyRelay(ports) : realRelay;
  if (args.schedule) return replaySchedule(args, factory);
  const started = performance.now();
  const kind = scheduleKind(args);
  out(
    args.path
      ? `Replaying seed ${args.seed} path ${args.path} (${kind.name})`
      : `Running ${args.runs} schedules (${kind.name}), seed ${args.seed}`,
  );
  let last: RunReport | undefined;
  const result = await checkSchedules({
    runs: args.runs,
    seed: args.seed,
    path: args.path,
    factory,
    shrink: args.shrink && (args.path === undefined || args.shrinkPath),
    keepGoing: args.keepGoing,
    only: args.only,
    onRun: (report) => (last = report),
    arbitrary: kind.arbitrary,
  });
  const elapsed = performance.now() - started;
  printStats(result.stats, elapsed);
  if (result.seen.length > 0) {
    printSeen(result.seen, args);
    return 1;
  }
  if (!result.failure) {
    if (args.path && args.verbose && last) {
      out(JSON.stringify(last.schedule));
      printTrace(await runSchedule(last.schedule, factory, { keepTrace: true }));
    }
    out('all invariants held');
    return 0;
  }
  const { failure } = result;
  out();
  out(`FAILED (after ${result.shrinkRuns} shrinking runs). Smallest schedule found:`);
  out(JSON.stringify(failure.schedule));
  out(describeFailure(failure.report));
  if (args.verbose) {
    const traced = await runSchedule(failure.schedule, factory, { keepTrace: true });
    printTrace(traced);
  }
  out();
  out(
    `replay: ${failure.replay}${args.only ? ` --only ${args.only.join(',')}` : ''}${flags(args)}`,
  );
  return 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(2);
  },
);
