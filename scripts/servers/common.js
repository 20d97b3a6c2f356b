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

/** Whether a server could listen on 127.0.0.1:port right now. */
function isPortFree(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Throws a ServerSetupError when something already listens on 127.0.0.1:port. */
async function assertPortFree(port, what, fix) {
  if (!(await isPortFree(port))) {
    throw new ServerSetupError(`${what}: port ${port} on 127.0.0.1 is already taken. ${fix}`);
  }
}

/** The kernel's range of local ports for outgoing connections (Linux), or undefined. */
function ephemeralPortRange() {
  try {
    const [low, high] = fs
      .readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    return low > 0 && high >= low ? { low, high } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A free port below the kernel's ephemeral range, for a server that is stopped and started again
 * on the same port (the broker of the outage tests). A port from listen(0) lies inside that range:
 * while the server is down, any outgoing connection may take it as its local port (a client that
 * keeps retrying it may even connect to itself), and the restart then finds the port taken.
 */
async function restartablePort() {
  const range = ephemeralPortRange();
  const floor = 10000;
  if (range && range.low - floor >= 1000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = floor + Math.floor(Math.random() * (range.low - floor));
      if (await isPortFree(port)) return port;
    }
  }
  return freePort();
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

/** Whether the process runs: an exited process nobody reaped yet (a zombie) does not. */
function isAlive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) state ...", comm may hold spaces and parentheses.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no procfs (macOS): signal 0 is all we can ask
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
  isPortFree,
  killProcess,
  restartablePort,
  sleep,
  tail,
  withLock,
};
