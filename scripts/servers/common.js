'use strict';
// Shared helpers of the server provisioning scripts (plain CommonJS: they run before any build).
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

/** A provisioning failure with one line that says what failed and how to fix it. */
class ServerSetupError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ServerSetupError';
  }
}

/** Downloads (jars) are cached here, outside the repository, and reused by every run. */
const CACHE_DIR =
  process.env.OUTBOX_CACHE_DIR || path.join(os.homedir(), '.cache', 'nestjs-outbox');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A TCP port that is free on 127.0.0.1 right now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Throws a ServerSetupError when something already listens on 127.0.0.1:port. */
function assertPortFree(port, what, fix) {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', () =>
      reject(new ServerSetupError(`${what}: port ${port} on 127.0.0.1 is already taken. ${fix}`)),
    );
    server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
  });
}

/** Major version of the java binary (e.g. 17), or undefined when it cannot run. */
function javaMajor(javaBin) {
  const out = spawnSync(javaBin, ['-version'], { encoding: 'utf8' });
  if (out.error || out.status !== 0) return undefined;
  const match = /version "(\d+)(?:\.(\d+))?/.exec(out.stderr + out.stdout);
  if (!match) return undefined;
  const major = Number(match[1]);
  return major === 1 ? Number(match[2]) : major;
}

/** A java binary of at least `min`: JAVA_HOME, the PATH, then the JDKs under /usr/lib/jvm. */
function findJava(min) {
  const candidates = [];
  if (process.env.JAVA_HOME) candidates.push(path.join(process.env.JAVA_HOME, 'bin', 'java'));
  candidates.push('java');
  const jvmDir = '/usr/lib/jvm';
  if (fs.existsSync(jvmDir)) {
    for (const entry of fs.readdirSync(jvmDir).sort().reverse()) {
      candidates.push(path.join(jvmDir, entry, 'bin', 'java'));
    }
  }
  for (const bin of candidates) {
    const major = javaMajor(bin);
    if (major !== undefined && major >= min) return { bin, major };
  }
  return undefined;
}

function hasCommand(cmd) {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Runs `fn` while holding a lock directory, so two runs never download into one folder at once. */
async function withLock(lockDir, timeoutMs, fn) {
  fs.mkdirSync(path.dirname(lockDir), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      break;
    } catch {
      const age = Date.now() - fs.statSync(lockDir, { throwIfNoEntry: false })?.mtimeMs;
      if (age > timeoutMs) fs.rmSync(lockDir, { recursive: true, force: true });
      else if (Date.now() > deadline)
        throw new ServerSetupError(`another run holds ${lockDir} for too long; remove it if stale`);
      await sleep(500);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}

/** Last non-empty lines of a log file, for error messages. */
function tail(file, lines = 5) {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join(' | ');
  } catch {
    return '';
  }
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL after `graceMs`. Resolves once the process is gone. */
async function killProcess(pid, graceMs = 10000) {
  if (!pid || !isAlive(pid)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await sleep(100);
  if (isAlive(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
    while (isAlive(pid)) await sleep(50);
  }
}

module.exports = {
  CACHE_DIR,
  ServerSetupError,
  assertPortFree,
  findJava,
  freePort,
  hasCommand,
  isAlive,
  killProcess,
  sleep,
  tail,
  withLock,
};
