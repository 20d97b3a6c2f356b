#!/usr/bin/env node
'use strict';
/**
 * `npm run compat`: installs the packed package into small NestJS apps the way a user would, and
 * checks that it works there. One app per stack under test/compat/stacks (NestJS 11 + mongoose 8
 * as CommonJS, NestJS 12 + mongoose 9 as ES modules), each in a fresh folder outside the repository:
 *
 *   1. the app (test/compat/app) with the stack's package.json, lockfile, tsconfig and Jest setup;
 *      `npm ci` installs the pinned versions of NestJS, mongoose, kafkajs and the tools;
 *   2. `npm install <tarball>` (no --force, no --legacy-peer-deps): any peer warning fails, and so
 *      does any problem `npm ls --all` reports; then the package's other format is removed, so
 *      the app proves it loads its own (dist/cjs for CommonJS, dist/esm for ES modules);
 *   3. `tsc` (strict) compiles the app, its tests and every ```ts block of the README;
 *   4. Node loads the compiled app module in the app's own format (require or import);
 *   5. `npm test` (unit, no servers) and `npm run test:e2e` (with MONGODB_URI and KAFKA_BROKERS:
 *      boots the app, commits a @Transactional + @EmitsEvent call, sees the relay publish it to
 *      Kafka and an @IdempotentHandler apply it once), with the app's own Jest.
 *
 * Prints one line per stack and the counts; exits non-zero when anything failed.
 * `npm run compat` runs it with servers (scripts/run-with-servers.js starts what is not given).
 * Options: --stack <name> (repeatable), --tarball <file> (check that tarball instead of building),
 * --keep (leave the app folders), --update-readme / --verify-readme (the "Tested with" table),
 * --update-lockfiles (re-resolve each stack's package.json into its lockfile, then exit).
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { renderTestedWith, withTestedWith } = require('./tested-with');

const root = path.join(__dirname, '..', '..');
const compatDir = path.join(root, 'test', 'compat');
const stacksDir = path.join(compatDir, 'stacks');
const readmePath = path.join(root, 'README.md');
const log = (line) => process.stdout.write(`[compat] ${line}\n`);

/** A step that failed: its message ends with the last lines its command printed. */
class StepError extends Error {
  constructor(message, output = '') {
    super(message);
    /** Everything the command printed. */
    this.output = output;
  }
}

function parseArgs(argv) {
  const args = { stacks: [], keep: false, tarball: undefined, readme: undefined, lockfiles: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--stack') args.stacks.push(argv[++i]);
    else if (arg === '--tarball') args.tarball = path.resolve(argv[++i]);
    else if (arg === '--keep') args.keep = true;
    else if (arg === '--update-readme') args.readme = 'update';
    else if (arg === '--verify-readme') args.readme = 'verify';
    else if (arg === '--update-lockfiles') args.lockfiles = true;
    else throw new Error(`unknown option ${arg} (see the header of scripts/compat/check.js)`);
  }
  return args;
}

/** Runs a command; returns its output, or throws a StepError with the output's last lines. */
function run(what, command, args, options = {}) {
  const result = spawnSync(command, args, {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 10 * 60_000,
    ...options,
    env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false', ...options.env },
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (result.error || result.status !== 0) {
    const tail = output.trim().split('\n').slice(-40).join('\n');
    const reason = result.error ? result.error.message : `exit code ${result.status}`;
    throw new StepError(`${what} failed (${reason}):\n${tail}`, output);
  }
  return output;
}

function timed(fn) {
  const started = Date.now();
  const value = fn();
  return { value, ms: Date.now() - started };
}

function stackNames(requested) {
  const all = fs
    .readdirSync(stacksDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  for (const name of requested) {
    if (!all.includes(name)) throw new Error(`no stack ${name} under test/compat/stacks`);
  }
  return requested.length > 0 ? requested : all;
}

function packTarball(into) {
  log('building and packing the package');
  run('npm run build', 'npm', ['run', 'build'], { cwd: root });
  const out = run('npm pack', 'npm', ['pack', '--json', '--pack-destination', into], { cwd: root });
  const [{ filename }] = JSON.parse(out.slice(out.indexOf('[')));
  return path.join(into, filename);
}

/** The ```ts blocks of the README, each as a module of the app (compiled with it, never run). */
function writeReadmeBlocks(appDir) {
  const text = fs.readFileSync(readmePath, 'utf8');
  const dir = path.join(appDir, 'src', 'readme');
  fs.mkdirSync(dir, { recursive: true });
  const fence = /^```ts\n([\s\S]*?)^```$/gm;
  let count = 0;
  for (let match = fence.exec(text); match; match = fence.exec(text)) {
    const line = text.slice(0, match.index).split('\n').length + 1;
    fs.writeFileSync(path.join(dir, `readme-line-${line}.ts`), match[1]);
    count++;
  }
  return count;
}

/** What npm said about peer dependencies while installing (its ERESOLVE explanations). */
function peerWarnings(output) {
  return output
    .split('\n')
    .filter((line) =>
      /ERESOLVE|While resolving:|^npm warn peer |Conflicting peer|UNMET PEER/i.test(line),
    );
}

function jestCounts(file) {
  const report = JSON.parse(fs.readFileSync(file, 'utf8'));
  return {
    passed: report.numPassedTests,
    failed: report.numFailedTests,
    skipped: report.numPendingTests + report.numTodoTests,
  };
}

function installedVersion(appDir, pkg) {
  const file = path.join(appDir, 'node_modules', ...pkg.split('/'), 'package.json');
  return JSON.parse(fs.readFileSync(file, 'utf8')).version;
}

const SHOWN_PACKAGES = [
  '@nestjs/core',
  '@nestjs/microservices',
  '@nestjs/mongoose',
  'mongoose',
  'kafkajs',
  'typescript',
  'jest',
];

/** Every step for one stack; returns its result (never throws). */
function checkStack(name, tarball, options) {
  const stackDir = path.join(stacksDir, name);
  const pkg = JSON.parse(fs.readFileSync(path.join(stackDir, 'package.json'), 'utf8'));
  const esm = pkg.type === 'module';
  const appDir = fs.mkdtempSync(path.join(os.tmpdir(), `nestjs-outbox-compat-${name}-`));
  const result = {
    name,
    moduleType: esm ? 'ES module' : 'CommonJS',
    steps: [],
    tests: { passed: 0, failed: 0, skipped: 0 },
    versions: {},
    /** Checks that failed; the later steps still ran. */
    problems: [],
    /** A step that failed and stopped the stack. */
    error: undefined,
    e2eRan: false,
  };
  const step = (label, fn) => {
    const { value, ms } = timed(fn);
    result.steps.push(`${label} ${(ms / 1000).toFixed(1)}s`);
    return value;
  };
  const say = (line) => log(`${name}: ${line}`);
  try {
    fs.cpSync(path.join(compatDir, 'app'), appDir, { recursive: true });
    fs.cpSync(stackDir, appDir, { recursive: true });
    const blocks = writeReadmeBlocks(appDir);

    say(`npm ci in ${appDir}`);
    const installs = [
      step('npm ci', () => run('npm ci', 'npm', ['ci'], { cwd: appDir })),
      step('install', () => {
        say(`npm install ${path.basename(tarball)}`);
        return run('npm install <tarball>', 'npm', ['install', tarball], { cwd: appDir });
      }),
    ];
    const warnings = installs.flatMap(peerWarnings);
    if (warnings.length > 0) {
      result.problems.push(`npm printed peer dependency warnings:\n${warnings.join('\n')}`);
    }
    try {
      step('npm ls', () => run('npm ls --all', 'npm', ['ls', '--all'], { cwd: appDir }));
    } catch (error) {
      // The tree is long: keep the lines that name a problem (invalid, missing, unmet peers).
      const named = (error.output ?? error.message)
        .split('\n')
        .filter((line) => /invalid|missing|extraneous|npm error|UNMET (?!OPTIONAL)/i.test(line));
      result.problems.push(`npm ls --all found problems:\n${named.join('\n')}`);
    }
    for (const pkgName of SHOWN_PACKAGES) {
      result.versions[pkgName] = installedVersion(appDir, pkgName);
    }
    // Each kind of app must load its own format only (one copy of the package, no dual-package
    // hazard): the other format's folder goes before anything is compiled or run.
    const otherFormat = path.join(
      appDir,
      'node_modules',
      'nestjs-outbox',
      'dist',
      esm ? 'cjs' : 'esm',
    );
    fs.rmSync(otherFormat, { recursive: true });

    say(`tsc (strict): the app, its tests and ${blocks} README blocks`);
    step('tsc', () =>
      run(
        'tsc',
        process.execPath,
        [require.resolve('typescript/bin/tsc', { paths: [appDir] }), '-p', 'tsconfig.json'],
        { cwd: appDir },
      ),
    );
    const load = esm
      ? ['--input-type=module', '-e', "await import('./dist/src/app.module.js')"]
      : ['-e', "require('./dist/src/app.module.js')"];
    step('node load', () =>
      run('loading the compiled app with node', process.execPath, load, { cwd: appDir }),
    );

    const jest = (label, script) => {
      const report = path.join(appDir, `jest-${label}.json`);
      say(`npm run ${script}`);
      try {
        step(label, () =>
          run(
            `npm run ${script}`,
            'npm',
            ['run', script, '--', '--forceExit', '--json', `--outputFile=${report}`],
            {
              cwd: appDir,
            },
          ),
        );
      } finally {
        if (fs.existsSync(report)) {
          const counts = jestCounts(report);
          for (const key of Object.keys(counts)) result.tests[key] += counts[key];
        }
      }
    };
    jest('unit', 'test');
    if (process.env.MONGODB_URI && process.env.KAFKA_BROKERS) {
      jest('e2e', 'test:e2e');
      result.e2eRan = true;
    } else {
      result.steps.push('e2e skipped: MONGODB_URI and KAFKA_BROKERS are not both set');
    }
  } catch (error) {
    result.error = error instanceof StepError ? error.message : error.stack;
  } finally {
    if (options.keep) say(`app left in ${appDir}`);
    else fs.rmSync(appDir, { recursive: true, force: true });
  }
  return result;
}

/** Re-resolves each stack's package.json into its committed lockfile (no registry host names). */
function updateLockfiles(names) {
  for (const name of names) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `nestjs-outbox-lock-${name}-`));
    try {
      fs.copyFileSync(path.join(stacksDir, name, 'package.json'), path.join(dir, 'package.json'));
      run(
        'npm install --package-lock-only',
        'npm',
        ['install', '--package-lock-only', '--omit-lockfile-registry-resolved'],
        { cwd: dir },
      );
      fs.copyFileSync(
        path.join(dir, 'package-lock.json'),
        path.join(stacksDir, name, 'package-lock.json'),
      );
      log(`${name}: package-lock.json updated`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

/** A stack passed when every step ran and no check failed. */
const passed = (result) =>
  !result.error && result.problems.length === 0 && result.tests.failed === 0;

function applyReadme(mode, results) {
  const table = renderTestedWith(results, process.versions.node.split('.')[0]);
  log(`tested with:\n${table}`);
  if (!mode) return true;
  if (!results.every((r) => passed(r) && r.e2eRan)) {
    log(`README not ${mode === 'update' ? 'updated' : 'verified'}: not every stack passed in full`);
    return true;
  }
  const readme = fs.readFileSync(readmePath, 'utf8');
  const next = withTestedWith(readme, table);
  if (mode === 'update') {
    fs.writeFileSync(readmePath, next);
    log('README.md "Tested with" updated');
    return true;
  }
  if (next !== readme) {
    log(
      'README.md "Tested with" differs from what this run tested: run `npm run compat -- --update-readme`',
    );
    return false;
  }
  return true;
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const names = stackNames(args.stacks);
  if (args.lockfiles) return updateLockfiles(names);

  const started = Date.now();
  const packDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nestjs-outbox-pack-'));
  let results;
  try {
    const tarball = args.tarball ?? packTarball(packDir);
    results = names.map((name) => checkStack(name, tarball, args));
  } finally {
    fs.rmSync(packDir, { recursive: true, force: true });
  }

  for (const r of results) {
    const counts = `tests: ${r.tests.passed} passed, ${r.tests.failed} failed, ${r.tests.skipped} skipped`;
    log(
      `${r.name} (${r.moduleType}): ${passed(r) ? 'ok' : 'FAILED'}; ${counts}; ${r.steps.join(', ')}`,
    );
    for (const problem of [...r.problems, ...(r.error ? [r.error] : [])]) {
      log(`${r.name}: ${problem}`);
    }
  }
  const readmeOk = applyReadme(args.readme, results);
  const failed = results.filter((r) => !passed(r)).length;
  const total = results.reduce(
    (sum, r) => ({
      passed: sum.passed + r.tests.passed,
      failed: sum.failed + r.tests.failed,
      skipped: sum.skipped + r.tests.skipped,
    }),
    { passed: 0, failed: 0, skipped: 0 },
  );
  log(
    `compat: ${results.length - failed} of ${results.length} stacks passed; ` +
      `tests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped ` +
      `(${((Date.now() - started) / 1000).toFixed(0)} s)`,
  );
  if (failed > 0 || !readmeOk) process.exitCode = 1;
}

main();
