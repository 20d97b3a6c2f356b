#!/usr/bin/env node
'use strict';
/**
 * `npm run compat`: installs the packed package into small NestJS apps the way a user would, and
 * checks that it works there. One app per stack under test/compat/stacks (NestJS 11 + mongoose 8
 * as CommonJS with Jest; NestJS 12 + mongoose 9 as ES modules with Jest; the app `nest new` makes
 * on NestJS 12: ES modules, TypeScript 6, Vitest), each on every Node.js version of
 * scripts/compat/node-binaries.js (that Node first on PATH for npm, tsc, node and the tests), each
 * in a fresh folder outside the repository:
 *
 *   1. the app (test/compat/app) with the stack's package.json, lockfile, tsconfig and test setup;
 *      `npm ci` installs the pinned versions of NestJS, mongoose, kafkajs and the tools;
 *   2. `npm install <tarball>` (no --force, no --legacy-peer-deps): any peer warning fails, and so
 *      does any problem `npm ls --all` reports, and an EBADENGINE warning about this package
 *      (third-party EBADENGINE warnings are reported, not failed: see CONTRIBUTING.md); then the
 *      package's other format is removed, so the app proves it loads its own (dist/cjs for
 *      CommonJS, dist/esm for ES modules);
 *   3. `tsc` (strict) compiles the app, its tests and every ```ts block of the README and of the
 *      docs/ pages (a test file among them is written as a spec and run in step 5 where its
 *      runner is the app's);
 *   4. Node loads the compiled app module in the app's own format (require or import);
 *   5. `npm test` (unit, no servers) and `npm run test:e2e` (with MONGODB_URI and KAFKA_BROKERS:
 *      boots the app, commits a @Transactional + @EmitsEvent call, sees the relay publish it to
 *      Kafka and an @IdempotentHandler apply it once), with the app's own Jest or Vitest.
 *
 * Prints one line per stack and Node.js version, and the counts; exits non-zero when anything
 * failed. `npm run compat` runs it with servers (scripts/run-with-servers.js starts what is not
 * given). Options: --stack <name> (repeatable), --node <major> (repeatable), --tarball <file>
 * (check that tarball instead of building), --keep (leave the app folders), --update-readme /
 * --verify-readme (the "Tested with" table), --update-lockfiles (re-resolve each stack's
 * package.json into its lockfile, then exit).
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { engineWarnings, peerWarnings, readmeBlockKind } = require('./classify');
const { blockName, docFiles, tsBlocks } = require('./doc-blocks');
const { ensureNode, selectNodeVersions } = require('./node-binaries');
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
  const args = {
    stacks: [],
    nodes: [],
    keep: false,
    tarball: undefined,
    readme: undefined,
    lockfiles: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--stack') args.stacks.push(argv[++i]);
    else if (arg === '--node') args.nodes.push(argv[++i]);
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
    env: { ...(options.env ?? process.env), npm_config_fund: 'false', npm_config_audit: 'false' },
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

/**
 * The ```ts blocks of the README and of the docs/ pages (doc-blocks.js) as modules of the app:
 * code is compiled, never run; a test file is written as a spec (compiled and run by the app's
 * tests) when the app's runner can run it, and left out otherwise (a Vitest file in a Jest app).
 * Each is named after its file and first line (readme-line-N, docs-testing-line-N). Returns how
 * many of each.
 */
function writeDocBlocks(appDir, runner) {
  const dir = path.join(appDir, 'src', 'readme');
  fs.mkdirSync(dir, { recursive: true });
  const counts = { code: 0, specs: 0, otherRunner: 0 };
  for (const file of docFiles(root)) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    for (const block of tsBlocks(text)) {
      const kind = readmeBlockKind(block.code);
      if (kind === 'vitest test' && runner !== 'vitest') {
        counts.otherRunner++;
        continue;
      }
      const spec = kind !== 'code';
      const name = `${blockName(file, block.line + 1)}${spec ? '.spec' : ''}.ts`;
      fs.writeFileSync(path.join(dir, name), block.code);
      counts[spec ? 'specs' : 'code']++;
    }
  }
  return counts;
}

/** Counts from a Jest `--json` report, or Vitest's JSON reporter (the same fields). */
function testCounts(file) {
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
];

/** The arguments after `npm run <script> --` that make the runner write a JSON report. */
const REPORT_ARGS = {
  jest: (report) => ['--forceExit', '--json', `--outputFile=${report}`],
  vitest: (report) => ['--reporter=default', '--reporter=json', `--outputFile.json=${report}`],
};

/**
 * The environment of every command of a stack run: a user's shell with `node` first on PATH. What
 * `npm run compat` hands down is left out: its settings (npm_config_*, npm_node_execpath, NODE;
 * with them, npm would put its prefix's bin folder, holding the Node.js running us, first on
 * PATH) and the repository's node_modules/.bin folders it put on PATH.
 */
function nodeEnv(node) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) && name !== 'NODE'),
  );
  const shellPath = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir && !dir.includes(`${path.sep}node_modules${path.sep}`));
  return { ...env, PATH: [node.binDir, ...shellPath].join(path.delimiter) };
}

/** Every step for one stack on one Node.js; returns its result (never throws). */
function checkStack(name, node, tarball, options) {
  const stackDir = path.join(stacksDir, name);
  const pkg = JSON.parse(fs.readFileSync(path.join(stackDir, 'package.json'), 'utf8'));
  const esm = pkg.type === 'module';
  const runner = pkg.devDependencies?.vitest ? 'vitest' : 'jest';
  const appDir = fs.mkdtempSync(
    path.join(os.tmpdir(), `nestjs-outbox-compat-${name}-node${node.version}-`),
  );
  const result = {
    name,
    node: node.version,
    moduleType: esm ? 'ES module' : 'CommonJS',
    runner,
    steps: [],
    tests: { passed: 0, failed: 0, skipped: 0 },
    versions: {},
    /** Third-party packages npm warned EBADENGINE about on this Node.js (reported, not failed). */
    engineWarnings: [],
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
  const say = (line) => log(`${name} on Node.js ${node.version}: ${line}`);
  const inApp = { cwd: appDir, env: nodeEnv(node) };
  try {
    fs.cpSync(path.join(compatDir, 'app'), appDir, { recursive: true });
    fs.cpSync(stackDir, appDir, { recursive: true });
    const blocks = writeDocBlocks(appDir, runner);

    // npm, and what its scripts call `node`, must run on this Node.js, not on the one running us.
    const seen = run(
      'npm exec node',
      'npm',
      ['exec', '--', 'node', '-p', 'process.version'],
      inApp,
    );
    if (seen.trim() !== `v${node.version}`) {
      throw new StepError(`npm runs scripts on Node.js ${seen.trim()}, not v${node.version}`);
    }

    say(`npm ci in ${appDir}`);
    const installs = [
      step('npm ci', () => run('npm ci', 'npm', ['ci'], inApp)),
      step('install', () => {
        say(`npm install ${path.basename(tarball)}`);
        return run('npm install <tarball>', 'npm', ['install', tarball], inApp);
      }),
    ];
    const warnings = installs.flatMap(peerWarnings);
    if (warnings.length > 0) {
      result.problems.push(`npm printed peer dependency warnings:\n${warnings.join('\n')}`);
    }
    const engines = engineWarnings(installs.join('\n'), 'nestjs-outbox');
    if (engines.ours.length > 0) {
      result.problems.push(
        `npm warned EBADENGINE: ${engines.ours.join(', ')} does not list this Node.js`,
      );
    }
    result.engineWarnings = engines.thirdParty;
    try {
      step('npm ls', () => run('npm ls --all', 'npm', ['ls', '--all'], inApp));
    } catch (error) {
      // The tree is long: keep the lines that name a problem (invalid, missing, unmet peers).
      const named = (error.output ?? error.message)
        .split('\n')
        .filter((line) => /invalid|missing|extraneous|npm error|UNMET (?!OPTIONAL)/i.test(line));
      result.problems.push(`npm ls --all found problems:\n${named.join('\n')}`);
    }
    for (const pkgName of [...SHOWN_PACKAGES, runner]) {
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

    say(
      `tsc (strict): the app, its tests and the README's and docs/' ${blocks.code} code blocks and ` +
        `${blocks.specs} test files (${blocks.otherRunner} for another runner left out)`,
    );
    step('tsc', () =>
      run(
        'tsc',
        node.node,
        [require.resolve('typescript/bin/tsc', { paths: [appDir] }), '-p', 'tsconfig.json'],
        inApp,
      ),
    );
    const load = esm
      ? ['--input-type=module', '-e', "await import('./dist/src/app.module.js')"]
      : ['-e', "require('./dist/src/app.module.js')"];
    step('node load', () => run('loading the compiled app with node', node.node, load, inApp));

    const tests = (label, script) => {
      const report = path.join(appDir, `${runner}-${label}.json`);
      say(`npm run ${script} (${runner})`);
      try {
        step(label, () =>
          run(
            `npm run ${script}`,
            'npm',
            ['run', script, '--', ...REPORT_ARGS[runner](report)],
            inApp,
          ),
        );
      } finally {
        if (fs.existsSync(report)) {
          const counts = testCounts(report);
          for (const key of Object.keys(counts)) result.tests[key] += counts[key];
        }
      }
    };
    tests('unit', 'test');
    if (process.env.MONGODB_URI && process.env.KAFKA_BROKERS) {
      tests('e2e', 'test:e2e');
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
  const table = renderTestedWith(results);
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

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const names = stackNames(args.stacks);
  if (args.lockfiles) return updateLockfiles(names);
  if (args.readme && (args.stacks.length > 0 || args.nodes.length > 0)) {
    throw new Error(
      `--${args.readme}-readme needs every stack on every Node.js version: leave out --stack and --node`,
    );
  }

  const started = Date.now();
  const nodes = [];
  for (const version of selectNodeVersions(args.nodes)) nodes.push(await ensureNode(version, log));
  const packDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nestjs-outbox-pack-'));
  const results = [];
  try {
    const tarball = args.tarball ?? packTarball(packDir);
    for (const name of names) {
      for (const node of nodes) results.push(checkStack(name, node, tarball, args));
    }
  } finally {
    fs.rmSync(packDir, { recursive: true, force: true });
  }

  for (const r of results) {
    const label = `${r.name} (${r.moduleType}, ${r.runner}) on Node.js ${r.node}`;
    const counts = `tests: ${r.tests.passed} passed, ${r.tests.failed} failed, ${r.tests.skipped} skipped`;
    log(`${label}: ${passed(r) ? 'ok' : 'FAILED'}; ${counts}; ${r.steps.join(', ')}`);
    if (r.engineWarnings.length > 0) {
      log(`${label}: npm warned EBADENGINE (reported, not failed): ${r.engineWarnings.join(', ')}`);
    }
    for (const problem of [...r.problems, ...(r.error ? [r.error] : [])]) {
      log(`${label}: ${problem}`);
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
    `compat: ${results.length - failed} of ${results.length} runs passed ` +
      `(${names.length} stacks x ${nodes.length} Node.js versions); ` +
      `tests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped ` +
      `(${((Date.now() - started) / 1000).toFixed(0)} s)`,
  );
  if (failed > 0 || !readmeOk) process.exitCode = 1;
}

main().catch((error) => {
  // A usage or set-up error whose message says what to do (a failing stack is reported above).
  process.stderr.write(`[compat] ${error.message}\n`);
  process.exitCode = 1;
});
