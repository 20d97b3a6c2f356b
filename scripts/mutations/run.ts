/**
 * `npm run mutations -- [--only id[,id]] [--list] [--no-baseline] [--sets a,b] [--keep]`
 *
 * Puts each deliberate defect of `mutations.ts` into a scratch copy of the repository (lib/,
 * test/ and the configs, in a temporary folder: the repository itself is never changed, also
 * not on Ctrl-C), one at a time, and runs the checks that should catch it: the simulation's
 * schedules as `npm test` runs them (simulation.check.ts, in a process of its own, stopping at
 * the first run that breaks an invariant) and, for the production adapters, their contract
 * suites and unit specs (Jest). First, the same checks run on the unmutated copy (the
 * baseline): a check that fails there proves nothing. Prints a table: each mutation caught,
 * survived, or broken (its anchor is not found exactly once, or the mutated file does not
 * compile), by which invariant or test, after how many runs, in how much time. Exits 1 when
 * one is not caught, 2 when the baseline fails.
 *
 * Contract suites on MongoDB and Kafka need servers: MONGODB_URI and KAFKA_BROKERS when set,
 * else the command runs itself under scripts/run-with-servers.js (as `npm test` does).
 * `--only` runs some mutations; `--list` lists them and checks their anchors; `--no-baseline`
 * skips the baseline; `--sets single,findings` runs only these simulation sets (while working
 * on a mutation: the result is not `npm test`'s); `--keep` leaves the scratch copy.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { MUTATIONS, applyEdits } from './mutations';
import type { Mutation, MutationCheck } from './mutations';

const ROOT = join(__dirname, '..', '..');
/** What the checks need of the repository, copied into the scratch folder. */
const COPIED = [
  'lib',
  'test',
  'scripts',
  'package.json',
  'tsconfig.json',
  'tsconfig.jest.json',
  'jest.config.js',
];
/** Wall-clock limits of one check (a mutation may make a run hang). */
const SIMULATION_LIMIT_MS = Number(process.env.MUTATIONS_SIM_LIMIT_MS) || 30 * 60_000;
const JEST_LIMIT_MS = 10 * 60_000;

type Status = 'caught' | 'survived' | 'broken' | 'timeout';

interface Outcome {
  id: string;
  status: Status;
  /** The invariant(s) or test that caught it, or why it is broken. */
  by?: string;
  /** Where and after how many runs or tests. */
  after?: string;
  /** First violation or failure message, the replay command. */
  details: string[];
  ms: number;
}

interface Args {
  only?: string[];
  list: boolean;
  baseline: boolean;
  sets?: string;
  keep: boolean;
}

const out = (line = ''): void => void process.stdout.write(`${line}\n`);
const log = (line: string): void => void process.stderr.write(`[mutations] ${line}\n`);

function parseArgs(argv: string[]): Args {
  const args: Args = { list: false, baseline: true, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--only') args.only = [...(args.only ?? []), ...argv[++i].split(',')];
    else if (arg === '--list') args.list = true;
    else if (arg === '--no-baseline') args.baseline = false;
    else if (arg === '--sets') args.sets = argv[++i];
    else if (arg === '--keep') args.keep = true;
    else throw new Error(`unknown option ${arg} (see scripts/mutations/run.ts)`);
  }
  return args;
}

// ---------------------------------------------------------------- child processes

let current: ChildProcess | undefined;
let scratch: string | undefined;
let keepScratch = false;

function cleanUp(): void {
  if (current?.pid && current.exitCode === null) {
    try {
      process.kill(-current.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  if (scratch && !keepScratch) rmSync(scratch, { recursive: true, force: true });
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    log(`${signal}: stopping (the repository was not changed)`);
    cleanUp();
    process.exit(130);
  });
}

/** Runs a command in the scratch folder (its own process group); stdout kept, stderr to `logFile`. */
function run(
  command: string[],
  cwd: string,
  limitMs: number,
  logFile: string,
): Promise<{ code: number | null; stdout: string; timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], command.slice(1), {
      cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: process.env,
    });
    current = child;
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    }, limitMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      current = undefined;
      writeFileSync(logFile, `${stderr}\n--- stdout ---\n${stdout}`);
      resolve({ code, stdout, timedOut });
    });
  });
}

// ---------------------------------------------------------------- checks

interface CheckOutcome {
  status: 'caught' | 'passed' | 'broken' | 'timeout';
  by?: string;
  after?: string;
  details: string[];
}

interface SimulationResult {
  caught: boolean;
  by?: string;
  violation?: string;
  where?: string;
  replay?: string;
  runs: number;
  sets: Array<{ name: string; runs: number; of: number; seed: number }>;
}

async function simulationCheck(dir: string, args: Args, name: string): Promise<CheckOutcome> {
  const logFile = join(dir, `.mutations-${name}-simulation.log`);
  const command = [
    process.execPath,
    '-r',
    'ts-node/register/transpile-only',
    'scripts/mutations/simulation.check.ts',
    ...(args.sets ? ['--sets', args.sets] : []),
  ];
  const { code, stdout, timedOut } = await run(command, dir, SIMULATION_LIMIT_MS, logFile);
  if (timedOut) {
    return {
      status: 'timeout',
      by: `no verdict within ${SIMULATION_LIMIT_MS / 60_000} min`,
      details: [`log: ${logFile}`],
    };
  }
  const line = stdout.split('\n').find((candidate) => candidate.startsWith('RESULT '));
  if (code !== 0 || !line) {
    const tail = readFileSync(logFile, 'utf8').trim().split('\n').slice(-6);
    return { status: 'broken', by: `the simulation did not run (exit ${code})`, details: tail };
  }
  const result = JSON.parse(line.slice('RESULT '.length)) as SimulationResult;
  const ran = result.sets.map((set) => `${set.name} ${set.runs}/${set.of}`).join(', ');
  if (!result.caught) {
    return { status: 'passed', after: `${result.runs} runs`, details: [`simulation: ${ran}`] };
  }
  return {
    status: 'caught',
    by: result.by,
    after: `${result.where} (${result.runs} runs in all)`,
    details: [
      `violation: ${result.violation ?? '?'}`,
      `replay (with the mutation applied): ${result.replay ?? '?'}`,
    ],
  };
}

interface JestReport {
  numPassedTests: number;
  numPendingTests: number;
  numFailedTests: number;
  testResults: Array<{
    name: string;
    status: string;
    message: string;
    assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] }>;
  }>;
}

const plain = (text: string): string =>
  // eslint-disable-next-line no-control-regex
  text.replace(/\u001b\[[0-9;]*m/g, '');

function firstLine(text: string): string {
  return (
    plain(text)
      .split('\n')
      .map((line) => line.trim())
      .find((line) => line.length > 0) ?? ''
  );
}

async function jestCheck(
  dir: string,
  files: readonly string[],
  name: string,
): Promise<CheckOutcome> {
  const logFile = join(dir, `.mutations-${name}-jest.log`);
  const report = join(dir, `.mutations-${name}-jest.json`);
  rmSync(report, { force: true });
  const command = [
    process.execPath,
    join(dir, 'node_modules', 'jest', 'bin', 'jest.js'),
    '--ci',
    '--maxWorkers=1',
    '--forceExit',
    '--json',
    `--outputFile=${report}`,
    '--runTestsByPath',
    ...files,
  ];
  const { timedOut } = await run(command, dir, JEST_LIMIT_MS, logFile);
  if (timedOut) {
    return {
      status: 'timeout',
      by: `no verdict within ${JEST_LIMIT_MS / 60_000} min`,
      details: [`log: ${logFile}`],
    };
  }
  if (!existsSync(report)) {
    const tail = readFileSync(logFile, 'utf8').trim().split('\n').slice(-6);
    return { status: 'broken', by: 'Jest did not run', details: tail };
  }
  const result = JSON.parse(readFileSync(report, 'utf8')) as JestReport;
  const broken = result.testResults.find(
    (suite) => suite.status === 'failed' && suite.assertionResults.length === 0,
  );
  if (broken) {
    return {
      status: 'broken',
      by: `${relative(dir, broken.name)} did not run`,
      details: [firstLine(broken.message)],
    };
  }
  const failing = result.testResults
    .map((suite) => ({
      file: relative(dir, suite.name),
      failed: suite.assertionResults.filter((test) => test.status === 'failed'),
    }))
    .filter((suite) => suite.failed.length > 0);
  if (failing.length > 0) {
    const [first] = failing;
    return {
      status: 'caught',
      by: `${first.file}: ${first.failed[0].fullName}`,
      after: `${result.numFailedTests} of ${result.numFailedTests + result.numPassedTests} tests failed`,
      details: [
        ...failing.map(
          (suite) =>
            `${suite.file}: ${suite.failed.length} failed: ${suite.failed.map((test) => test.fullName).join('; ')}`,
        ),
        `first failure: ${firstLine(first.failed[0].failureMessages[0] ?? '')}`,
      ],
    };
  }
  const ran = result.numPassedTests;
  return {
    status: 'passed',
    after: `${ran} tests`,
    details: [
      `jest: ${ran} passed, ${result.numPendingTests} skipped (${files.join(', ')})`,
      ...(ran === 0 ? ['no test ran: are the servers there?'] : []),
    ],
  };
}

async function runChecks(
  dir: string,
  checks: readonly MutationCheck[],
  args: Args,
  name: string,
): Promise<CheckOutcome> {
  const passed: string[] = [];
  const after: string[] = [];
  for (const check of checks) {
    const outcome =
      check === 'simulation'
        ? await simulationCheck(dir, args, name)
        : await jestCheck(dir, check.jest, name);
    if (outcome.status !== 'passed') return outcome;
    passed.push(...outcome.details);
    if (outcome.after) after.push(outcome.after);
  }
  return { status: 'passed', after: after.join(' + '), details: passed };
}

// ---------------------------------------------------------------- compiling a mutated file

/** Parsed files other than the mutated one, kept from one compilation to the next. */
const parsedFiles = new Map<string, ts.SourceFile>();

/** Type errors of `file` (in the scratch copy) as it now is. */
function compileErrors(dir: string, file: string): string[] {
  const config = ts.readConfigFile(join(dir, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, dir);
  const options = { ...parsed.options, noEmit: true };
  const path = join(dir, file);
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, onError, create) => {
    if (name === path) return read(name, language, onError, create);
    let source = parsedFiles.get(name);
    if (!source) {
      source = read(name, language, onError, create);
      if (source) parsedFiles.set(name, source);
    }
    return source;
  };
  const program = ts.createProgram({ rootNames: [path], options, host });
  const source = program.getSourceFile(path);
  if (!source) return [`${file} is not part of the program`];
  return [
    ...program.getSyntacticDiagnostics(source),
    ...program.getSemanticDiagnostics(source),
  ].map((diagnostic) => {
    const { line } = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    return `${file}:${line + 1}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
  });
}

// ---------------------------------------------------------------- the run

function checkName(check: MutationCheck): string {
  return check === 'simulation' ? 'simulation' : `jest ${check.jest.join(', ')}`;
}

function listMutations(mutations: readonly Mutation[]): number {
  let broken = 0;
  for (const mutation of mutations) {
    const applied = applyEdits(mutation, readFileSync(join(ROOT, mutation.file), 'utf8'));
    if ('broken' in applied) broken++;
    out(`${mutation.id}  (${mutation.file})`);
    out(`    ${mutation.description}`);
    out(`    checks: ${mutation.checks.map(checkName).join('; ')}`);
    if ('broken' in applied) out(`    BROKEN: ${applied.broken}`);
  }
  out();
  out(`${mutations.length} mutations, ${broken} broken`);
  return broken > 0 ? 1 : 0;
}

function needsServers(mutations: readonly Mutation[]): boolean {
  return mutations.some((mutation) =>
    mutation.checks.some(
      (check) => check !== 'simulation' && check.jest.some((file) => file.includes('e2e-spec')),
    ),
  );
}

/** Runs this command again under scripts/run-with-servers.js (servers started as for `npm test`). */
function underServers(): Promise<number> {
  const command = [
    join(ROOT, 'scripts', 'run-with-servers.js'),
    '--',
    process.execPath,
    ...process.execArgv,
    __filename,
    ...process.argv.slice(2),
  ];
  log('MONGODB_URI or KAFKA_BROKERS is not set: running under scripts/run-with-servers.js');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, command, {
      stdio: 'inherit',
      env: { ...process.env, OUTBOX_MUTATIONS_SERVERS: '1' },
    });
    child.on('close', (code) => resolve(code ?? 1));
  });
}

function makeScratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'nestjs-outbox-mutations-'));
  for (const entry of COPIED) cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
  symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(dir, 'node_modules'), 'dir');
  return dir;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}

function printTable(outcomes: readonly Outcome[]): void {
  const rows = [
    ['mutation', 'result', 'caught by', 'after', 'time'],
    ...outcomes.map((o) => [o.id, o.status, o.by ?? '', o.after ?? '', seconds(o.ms)]),
  ];
  const widths = rows[0].map((_, column) =>
    Math.min(column === 2 ? 70 : 90, Math.max(...rows.map((row) => row[column].length))),
  );
  const cut = (text: string, width: number): string =>
    text.length > width ? `${text.slice(0, width - 1)}…` : text.padEnd(width);
  out();
  for (const [index, row] of rows.entries()) {
    out(`| ${row.map((cell, column) => cut(cell, widths[column])).join(' | ')} |`);
    if (index === 0) out(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
  }
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const ids = new Set(MUTATIONS.map((mutation) => mutation.id));
  if (ids.size !== MUTATIONS.length) throw new Error('two mutations have the same id');
  for (const id of args.only ?? []) {
    if (!ids.has(id)) throw new Error(`no mutation ${id} (npm run mutations -- --list)`);
  }
  const selected = MUTATIONS.filter((mutation) => !args.only || args.only.includes(mutation.id));
  if (args.list) return listMutations(selected);
  if (
    needsServers(selected) &&
    (!process.env.MONGODB_URI || !process.env.KAFKA_BROKERS) &&
    !process.env.OUTBOX_MUTATIONS_SERVERS
  ) {
    return underServers();
  }

  const started = Date.now();
  keepScratch = args.keep;
  scratch = makeScratch();
  log(`scratch copy: ${scratch}${args.keep ? ' (kept)' : ''}`);

  if (args.baseline) {
    const checks: MutationCheck[] = [];
    if (selected.some((mutation) => mutation.checks.includes('simulation'))) {
      checks.push('simulation');
    }
    const files = [
      ...new Set(
        selected.flatMap((mutation) =>
          mutation.checks.flatMap((check) => (check === 'simulation' ? [] : check.jest)),
        ),
      ),
    ];
    if (files.length > 0) checks.push({ jest: files });
    const t0 = Date.now();
    log(`baseline (no mutation): ${checks.map(checkName).join('; ')}`);
    const baseline = await runChecks(scratch, checks, args, 'baseline');
    if (baseline.status !== 'passed') {
      out(`The unmutated code fails its checks (${baseline.status}): ${baseline.by ?? ''}`);
      for (const line of baseline.details) out(`    ${line}`);
      out('Fix that first: a check that fails without a mutation shows nothing.');
      return 2;
    }
    log(`baseline passed in ${seconds(Date.now() - t0)}: ${baseline.details.join('; ')}`);
  }

  const outcomes: Outcome[] = [];
  for (const mutation of selected) {
    const t0 = Date.now();
    const path = join(scratch, mutation.file);
    const original = readFileSync(path, 'utf8');
    const applied = applyEdits(mutation, original);
    let outcome: Outcome;
    if ('broken' in applied) {
      outcome = { id: mutation.id, status: 'broken', by: applied.broken, details: [], ms: 0 };
    } else {
      try {
        writeFileSync(path, applied.text);
        const errors = compileErrors(scratch, mutation.file);
        if (errors.length > 0) {
          outcome = {
            id: mutation.id,
            status: 'broken',
            by: 'the mutated file does not compile',
            details: errors.slice(0, 3),
            ms: Date.now() - t0,
          };
        } else {
          const result = await runChecks(scratch, mutation.checks, args, mutation.id);
          outcome = {
            id: mutation.id,
            status: result.status === 'passed' ? 'survived' : result.status,
            by: result.by,
            after: result.after,
            details: result.details,
            ms: Date.now() - t0,
          };
        }
      } finally {
        writeFileSync(path, original);
      }
    }
    outcomes.push(outcome);
    log(
      `${mutation.id}: ${outcome.status}${outcome.by ? ` by ${outcome.by}` : ''}${outcome.after ? `, ${outcome.after}` : ''} (${seconds(outcome.ms)})`,
    );
  }

  printTable(outcomes);
  out();
  for (const outcome of outcomes) {
    if (outcome.details.length === 0) continue;
    out(`${outcome.id} (${outcome.status}):`);
    for (const line of outcome.details) out(`    ${line}`);
  }
  const count = (status: Status) => outcomes.filter((o) => o.status === status).length;
  out();
  out(
    `mutations: ${count('caught')} caught, ${count('survived')} survived, ${count('broken')} broken, ${count('timeout')} timed out, of ${outcomes.length}; ${seconds(Date.now() - started)}${args.sets ? ` (simulation sets: ${args.sets} only)` : ''}`,
  );
  return outcomes.every((o) => o.status === 'caught') ? 0 : 1;
}

main()
  .then(
    (code) => code,
    (error: unknown) => {
      process.stderr.write(
        `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      return 2;
    },
  )
  .then((code) => {
    cleanUp();
    process.exit(code);
  });
