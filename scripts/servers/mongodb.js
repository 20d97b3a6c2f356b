'use strict';
// A MongoDB replica set for the tests: MONGODB_URI, else mongodb-memory-server, else PoppyDB.
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {
  CACHE_DIR,
  ServerSetupError,
  findJava,
  freePort,
  hasCommand,
  isAlive,
  killProcess,
  sleep,
  tail,
} = require('./common');

const POPPYDB_VERSION = process.env.OUTBOX_POPPYDB_VERSION || '6.3.9';
const MEMORY_SERVER_TIMEOUT_MS = Number(process.env.OUTBOX_MONGOMS_TIMEOUT_MS || 120000);
const READY_TIMEOUT_MS = 60000;
const FIX = 'Set MONGODB_URI to a MongoDB replica set';

/** Redacts credentials from a connection string before it is printed. */
function redact(uri) {
  return uri.replace(/\/\/[^@/]+@/, '//***@');
}

/** Asks the server what it is: real MongoDB or PoppyDB, and whether it is a replica set. */
async function describeServer(uri) {
  const { MongoClient } = require('mongodb');
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10000 });
  try {
    await client.connect();
    const hello = await client.db('admin').command({ hello: 1 });
    const buildInfo = await client
      .db('admin')
      .command({ buildInfo: 1 })
      .catch(() => ({}));
    const kind = hello.poppyCapabilities || buildInfo.poppyCapabilities ? 'poppydb' : 'mongodb';
    const replicaSet = Boolean(hello.setName) || hello.msg === 'isdbgrid';
    return { kind, version: buildInfo.version, replicaSet };
  } finally {
    await client.close().catch(() => undefined);
  }
}

async function fromUri(uri) {
  let info;
  try {
    info = await describeServer(uri);
  } catch (error) {
    throw new ServerSetupError(
      `MongoDB: cannot reach MONGODB_URI (${redact(uri)}): ${error.message}. Check the URI and that the server runs.`,
    );
  }
  if (!info.replicaSet) {
    throw new ServerSetupError(
      `MongoDB: MONGODB_URI (${redact(uri)}) is not a replica set; transactions and change streams need one. Start mongod with --replSet and rs.initiate().`,
    );
  }
  return {
    uri,
    kind: info.kind,
    version: info.version,
    source: 'MONGODB_URI',
    stop: async () => {},
  };
}

async function fromMemoryServer() {
  const { MongoMemoryReplSet } = require('mongodb-memory-server');
  let replSet;
  const timeout = new Promise((_, reject) =>
    setTimeout(
      () => reject(new Error(`no mongod after ${MEMORY_SERVER_TIMEOUT_MS / 1000}s`)),
      MEMORY_SERVER_TIMEOUT_MS,
    ).unref(),
  );
  // mongodb-memory-server prints its own stack traces on failure; the runner says it in one line.
  const { warn, error } = console;
  console.warn = console.error = () => undefined;
  try {
    replSet = await Promise.race([
      MongoMemoryReplSet.create({
        replSet: { count: 1, storageEngine: 'wiredTiger' },
        instanceOpts: [{ ip: '127.0.0.1' }],
      }),
      timeout,
    ]);
  } finally {
    Object.assign(console, { warn, error });
  }
  const uri = replSet.getUri();
  const info = await describeServer(uri);
  return {
    uri,
    kind: info.kind,
    version: info.version,
    source: 'mongodb-memory-server',
    stop: () => replSet.stop(),
  };
}

/**
 * The PoppyDB cli jar: POPPYDB_JAR, else one placed in the cache (<cache>/poppydb/poppydb-cli.jar,
 * e.g. built from PoppyDB's sources), else Maven Central (de.caluga:poppydb:<version>:jar:cli).
 */
function poppyJar() {
  if (process.env.POPPYDB_JAR) {
    if (!fs.existsSync(process.env.POPPYDB_JAR))
      throw new Error(`POPPYDB_JAR ${process.env.POPPYDB_JAR} does not exist`);
    return process.env.POPPYDB_JAR;
  }
  const cached = path.join(CACHE_DIR, 'poppydb', 'poppydb-cli.jar');
  if (fs.existsSync(cached)) return cached;
  const m2 = path.join(
    os.homedir(),
    '.m2',
    'repository',
    'de',
    'caluga',
    'poppydb',
    POPPYDB_VERSION,
  );
  const jar = path.join(m2, `poppydb-${POPPYDB_VERSION}-cli.jar`);
  if (fs.existsSync(jar)) return jar;
  if (!hasCommand('mvn')) throw new Error('Maven (mvn) is not installed');
  const result = spawnSync(
    'mvn',
    [
      '-B',
      '-q',
      'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:get',
      `-Dartifact=de.caluga:poppydb:${POPPYDB_VERSION}:jar:cli`,
      '-Dtransitive=false',
    ],
    { encoding: 'utf8', timeout: 10 * 60 * 1000 },
  );
  if (result.status !== 0 || !fs.existsSync(jar)) {
    const notFound = /Could not find artifact/.test(result.stdout + result.stderr);
    throw new Error(
      `de.caluga:poppydb:${POPPYDB_VERSION}:jar:cli ${notFound ? 'is not served by the Maven repository here' : 'could not be downloaded'}`,
    );
  }
  return jar;
}

async function fromPoppyDb() {
  const jar = poppyJar();
  const java = findJava(21);
  if (!java)
    throw new Error('PoppyDB needs Java 21 or newer (none under JAVA_HOME, PATH, /usr/lib/jvm)');
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nestjs-outbox-poppydb-'));
  const logFile = path.join(dataDir, 'poppydb.log');
  const out = fs.openSync(logFile, 'a');
  const child = spawn(
    java.bin,
    [
      `-Xmx${process.env.OUTBOX_POPPYDB_HEAP || '2g'}`,
      '-jar',
      jar,
      '--no-config',
      '--bind',
      '127.0.0.1',
      '--port',
      String(port),
      '--rs-name',
      'rs0',
      '--rs-seed',
      `127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', out, out], detached: true },
  );
  child.unref();
  fs.closeSync(out);
  const uri = `mongodb://127.0.0.1:${port}/?replicaSet=rs0&retryWrites=false`;
  const stop = async () => {
    await killProcess(child.pid, 5000);
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (!isAlive(child.pid)) throw new Error(`PoppyDB exited during start-up: ${tail(logFile, 3)}`);
    try {
      const info = await describeServer(uri);
      if (info.replicaSet)
        return {
          uri,
          kind: 'poppydb',
          version: info.version,
          source: 'poppydb',
          pid: child.pid,
          stop,
        };
    } catch {
      /* not ready yet */
    }
    await sleep(500);
  }
  await stop();
  throw new Error(
    `PoppyDB did not become a writable replica set within ${READY_TIMEOUT_MS / 1000}s`,
  );
}

/**
 * Provisions MongoDB. With `optional`, a machine where none can be had yields
 * `{ kind: 'none', reason }` (tests that need MongoDB are then listed as skipped);
 * without it, that is an error with one line saying how to fix it.
 */
async function provisionMongo({ optional, log }) {
  if (process.env.MONGODB_URI) return fromUri(process.env.MONGODB_URI);
  const attempts = [];
  try {
    return await fromMemoryServer();
  } catch (error) {
    const why = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|Download failed/.test(error.message)
      ? 'mongod download failed (no network)'
      : error.message.split('\n')[0];
    attempts.push(`mongodb-memory-server: ${why}`);
    log(`MongoDB: mongodb-memory-server: ${why}; trying PoppyDB`);
  }
  try {
    return await fromPoppyDb();
  } catch (error) {
    attempts.push(`PoppyDB: ${error.message.split('\n')[0]}`);
  }
  const reason = `none could be started here (${attempts.join('; ')})`;
  if (optional) return { kind: 'none', source: 'none', reason, stop: async () => {} };
  throw new ServerSetupError(
    `MongoDB: ${reason}. ${FIX}, point POPPYDB_JAR at a PoppyDB cli jar, or run with OUTBOX_TEST_MONGODB=optional to skip (and list) the tests that need MongoDB.`,
  );
}

module.exports = { provisionMongo, describeServer, redact };
