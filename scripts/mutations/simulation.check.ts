/**
 * The simulation check of `npm run mutations`, run in its own process on the scratch copy that
 * holds one mutation (see run.ts): the schedules the simulation specs of `npm test` run, each
 * set with the seed and run count its spec file uses (issue 35's families and issue 33's
 * tenants family from proofs.simulation.spec.ts included) (read from the file, so they stay the
 * same; `SIM_SEED`, `SIM_RUNS`, `SIM_SCHEDULED_RUNS`, `SIM_STOP_RUNS`, `SIM_PARTITIONED_RUNS`,
 * `SIM_HAND_OVER_RUNS`, `SIM_RETRY_TAKEOVER_RUNS`, `SIM_DUE_LAG_RUNS` change them as for the specs), then every saved finding. Stops at the first run that breaks
 * an invariant (no shrinking). Prints progress on stderr and its result as one line of JSON
 * on stdout, after `RESULT `.
 *
 *   node -r ts-node/register/transpile-only scripts/mutations/simulation.check.ts [--sets a,b]
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type fc from 'fast-check';
import { partitionedSchedules } from '../../test/simulation/schedule/partitioned.arbitrary';
import { PROOF_FAMILIES } from '../../test/simulation/schedule/proof.families';
import { scheduledScheduleArbitrary } from '../../test/simulation/schedule/schedule.arbitrary';
import type { Schedule } from '../../test/simulation/schedule/schedule.types';
import {
  gracefulStopSchedules,
  handOverSchedules,
} from '../../test/simulation/schedule/stop-under-load.arbitrary';
import { checkSchedules, runSchedule } from '../../test/simulation/simulation.runner';
import type { RunReport } from '../../test/simulation/simulation.runner';
import { realRelay } from '../../test/simulation/world/relay.factory';

const SIMULATION = join(__dirname, '..', '..', 'test', 'simulation');

/** One set of generated schedules of a simulation spec. */
interface ScheduleSet {
  name: string;
  /** The spec file (test/simulation) that runs it, and the variable that sets its run count. */
  spec: string;
  runsVariable: string;
  arbitrary: () => fc.Arbitrary<Schedule> | undefined;
  /** `npm run simulate` flag that replays this set's schedules. */
  flag: string;
}

const SCHEDULE_SETS: readonly ScheduleSet[] = [
  {
    name: 'single',
    spec: 'relay.simulation.spec.ts',
    runsVariable: 'SIM_RUNS',
    arbitrary: () => undefined,
    flag: '',
  },
  {
    name: 'scheduled',
    spec: 'relay.simulation.spec.ts',
    runsVariable: 'SIM_SCHEDULED_RUNS',
    arbitrary: () => scheduledScheduleArbitrary,
    flag: ' --scheduled',
  },
  {
    name: 'graceful-stops',
    spec: 'relay.simulation.spec.ts',
    runsVariable: 'SIM_STOP_RUNS',
    arbitrary: () => gracefulStopSchedules,
    flag: ' --graceful-stops',
  },
  {
    name: 'partitioned',
    spec: 'partitioned.simulation.spec.ts',
    runsVariable: 'SIM_PARTITIONED_RUNS',
    arbitrary: () => partitionedSchedules(),
    flag: ' --partitioned',
  },
  {
    name: 'hand-overs',
    spec: 'partitioned.simulation.spec.ts',
    runsVariable: 'SIM_HAND_OVER_RUNS',
    arbitrary: () => handOverSchedules,
    flag: ' --hand-overs',
  },
  ...Object.entries({
    'lease-pressure': 'SIM_LEASE_PRESSURE_RUNS',
    'destination-errors': 'SIM_DESTINATION_ERROR_RUNS',
    'retry-takeover': 'SIM_RETRY_TAKEOVER_RUNS',
    'due-lag': 'SIM_DUE_LAG_RUNS',
    tenants: 'SIM_TENANT_RUNS',
  }).map(([name, runsVariable]) => ({
    name,
    spec: 'proofs.simulation.spec.ts',
    runsVariable,
    arbitrary: () => PROOF_FAMILIES[name],
    flag: ` --family ${name}`,
  })),
];

/** `Number(process.env.NAME ?? 1_800)` as the spec file has it: the variable, else the default. */
function specNumber(spec: string, variable: string): number {
  const given = process.env[variable];
  if (given !== undefined && given !== '') return Number(given);
  const text = readFileSync(join(SIMULATION, spec), 'utf8');
  const match = new RegExp(`process\\.env\\.${variable} \\?\\? ([0-9_]+)`).exec(text);
  if (!match) {
    throw new Error(
      `cannot read the default of ${variable} in test/simulation/${spec}: update scripts/mutations/simulation.check.ts`,
    );
  }
  return Number(match[1].replace(/_/g, ''));
}

interface SimulationCheckResult {
  caught: boolean;
  /** The invariants broken, e.g. `(g) fencing`. */
  by?: string;
  /** The first violation. */
  violation?: string;
  /** Where: `single run 413 of 1800`, or the finding's file. */
  where?: string;
  /** The command that replays the failing schedule (with the mutation applied). */
  replay?: string;
  /** Schedules run in all. */
  runs: number;
  /** Per set: runs made. */
  sets: Array<{ name: string; runs: number; of: number; seed: number }>;
}

function failureOf(report: RunReport): Pick<SimulationCheckResult, 'by' | 'violation'> {
  return {
    by: report.failed.map((result) => `(${result.id}) ${result.name}`).join(', '),
    violation: report.failed[0]?.violations[0],
  };
}

async function main(): Promise<SimulationCheckResult> {
  const argv = process.argv.slice(2);
  const setsAt = argv.indexOf('--sets');
  const wanted = setsAt >= 0 ? argv[setsAt + 1].split(',') : undefined;
  const result: SimulationCheckResult = { caught: false, runs: 0, sets: [] };
  for (const set of SCHEDULE_SETS) {
    if (wanted && !wanted.includes(set.name)) continue;
    const runs = specNumber(set.spec, set.runsVariable);
    const seed = specNumber(set.spec, 'SIM_SEED');
    const started = Date.now();
    const checked = await checkSchedules({
      runs,
      seed,
      factory: realRelay,
      arbitrary: set.arbitrary(),
      shrink: false,
    });
    result.runs += checked.stats.runs;
    result.sets.push({ name: set.name, runs: checked.stats.runs, of: runs, seed });
    process.stderr.write(
      `[simulation.check] ${set.name}: ${checked.stats.runs} of ${runs} runs (seed ${seed}), ${checked.failure ? 'an invariant broke' : 'all invariants held'}, ${Math.round((Date.now() - started) / 1000)} s\n`,
    );
    if (checked.failure) {
      return {
        ...result,
        caught: true,
        ...failureOf(checked.failure.report),
        where: `${set.name} run ${checked.stats.runs} of ${runs}`,
        replay: `${checked.failure.replay}${set.flag}`,
      };
    }
  }
  if (!wanted || wanted.includes('findings')) {
    const files = readdirSync(join(SIMULATION, 'findings'))
      .filter((file) => file.endsWith('.json'))
      .sort();
    let ran = 0;
    for (const file of files) {
      const schedule = JSON.parse(
        readFileSync(join(SIMULATION, 'findings', file), 'utf8'),
      ) as Schedule;
      const report = await runSchedule(schedule, realRelay);
      ran++;
      result.runs++;
      if (report.failed.length > 0) {
        result.sets.push({ name: 'findings', runs: ran, of: files.length, seed: 0 });
        return {
          ...result,
          caught: true,
          ...failureOf(report),
          where: `finding ${file}`,
          replay: `npm run simulate -- --schedule test/simulation/findings/${file}`,
        };
      }
    }
    result.sets.push({ name: 'findings', runs: ran, of: files.length, seed: 0 });
    process.stderr.write(`[simulation.check] findings: ${ran} schedules, all invariants held\n`);
  }
  return result;
}

main().then(
  (result) => {
    process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(2);
  },
);
