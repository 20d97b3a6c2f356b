'use strict';
// A real single-node Kafka broker (KRaft, combined broker + controller) from Maven Central jars.
const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {
  CACHE_DIR,
  ServerSetupError,
  assertPortFree,
  findJava,
  hasCommand,
  isAlive,
  killProcess,
  restartablePort,
  sleep,
  tail,
  withLock,
} = require('./common');

const POM = path.join(__dirname, 'kafka-pom.xml');
const KAFKA_VERSION = /<kafka.version>([^<]+)<\/kafka.version>/.exec(
  fs.readFileSync(POM, 'utf8'),
)[1];
const JARS_DIR = path.join(CACHE_DIR, `kafka-${KAFKA_VERSION}`, 'libs');
const READY_TIMEOUT_MS = Number(process.env.OUTBOX_KAFKA_READY_TIMEOUT_MS || 90000);
const FIX = 'Set KAFKA_BROKERS to use a broker of your own.';

/** Makes sure the broker's jars are in the cache; downloads them once with Maven. */
async function ensureKafkaJars(log) {
  const marker = path.join(JARS_DIR, '.complete');
  if (fs.existsSync(marker)) return { downloaded: false };
  if (!hasCommand('mvn')) {
    throw new ServerSetupError(
      `Kafka: Maven (mvn) is not installed, so the broker jars cannot be downloaded. Install Maven (apt-get install maven) or ${FIX}`,
    );
  }
  return withLock(`${JARS_DIR}.lock`, 15 * 60 * 1000, async () => {
    if (fs.existsSync(marker)) return { downloaded: false };
    log(`Kafka: downloading org.apache.kafka:kafka_2.13:${KAFKA_VERSION} into ${JARS_DIR} (once)`);
    const staging = `${JARS_DIR}.partial`;
    fs.rmSync(staging, { recursive: true, force: true });
    const result = spawnSync(
      'mvn',
      [
        '-B',
        '-q',
        '-f',
        POM,
        'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies',
        '-DincludeScope=runtime',
        `-DoutputDirectory=${staging}`,
      ],
      { encoding: 'utf8', timeout: 15 * 60 * 1000 },
    );
    if (result.status !== 0) {
      const why = (result.stdout + result.stderr)
        .split('\n')
        .find((line) => line.includes('ERROR'))
        ?.trim();
      throw new ServerSetupError(
        `Kafka: downloading the broker jars with Maven failed (${why || result.error?.message || 'exit ' + result.status}). Check that Maven Central is reachable, or ${FIX}`,
      );
    }
    fs.rmSync(JARS_DIR, { recursive: true, force: true });
    fs.renameSync(staging, JARS_DIR);
    fs.writeFileSync(marker, new Date().toISOString());
    return { downloaded: true };
  });
}

/**
 * Two client listeners: PLAINTEXT, which every test uses, and FAULTS, for the tests that put the
 * Kafka fault proxy (test/harness/kafka-fault-proxy) between a client and the broker. FAULTS
 * listens on `faultsPort` but advertises `faultsProxyPort`, where the proxy listens: a client
 * that bootstraps through the proxy reads the proxy's address in the metadata and stays on it.
 */
function brokerProperties({ port, controllerPort, faultsPort, faultsProxyPort, logDir }) {
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},FAULTS://127.0.0.1:${faultsPort},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port},FAULTS://127.0.0.1:${faultsProxyPort}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,FAULTS:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${logDir}`,
    'num.partitions=1',
    'default.replication.factor=1',
    'min.insync.replicas=1',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=3',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    'auto.create.topics.enable=false',
    'log.flush.interval.messages=1',
    '',
  ].join('\n');
}

/**
 * Starts the broker described by `state` (created by `createKafkaState`) and waits until a
 * kafkajs admin can describe the cluster. Returns the pid.
 */
async function startKafkaProcess(state) {
  await assertPortFree(state.port, 'Kafka', FIX);
  await assertPortFree(state.controllerPort, 'Kafka controller', FIX);
  // Not `faultsProxyPort`: a test's fault proxy may be listening there across a restart.
  if (state.faultsPort) await assertPortFree(state.faultsPort, 'Kafka fault listener', FIX);
  const java = findJava(17);
  if (!java) {
    throw new ServerSetupError(
      `Kafka: no Java 17 or newer found (JAVA_HOME, PATH, /usr/lib/jvm). Install a JDK (apt-get install openjdk-17-jre-headless) or ${FIX}`,
    );
  }
  const out = fs.openSync(state.logFile, 'a');
  const child = spawn(
    java.bin,
    [
      '-Xms256m',
      '-Xmx768m',
      '-XX:+UseG1GC',
      `-Dkafka.logs.dir=${state.dataDir}`,
      '-cp',
      path.join(JARS_DIR, '*'),
      'kafka.Kafka',
      state.propsFile,
    ],
    { stdio: ['ignore', out, out], detached: true },
  );
  child.unref();
  fs.closeSync(out);
  await waitUntilReady(state, child.pid);
  return child.pid;
}

async function waitUntilReady(state, pid) {
  const { Kafka, logLevel } = require('kafkajs');
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let lastError;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) {
      const why = tail(state.logFile, 3);
      throw new ServerSetupError(
        `Kafka: the broker exited during start-up (${/Address already in use/.test(why) ? 'a port is already taken' : why}). See ${state.logFile}, or ${FIX}`,
      );
    }
    const kafka = new Kafka({
      clientId: 'outbox-test-readiness',
      brokers: [`127.0.0.1:${state.port}`],
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
      connectionTimeout: 1000,
    });
    const admin = kafka.admin();
    try {
      await admin.connect();
      const cluster = await admin.describeCluster();
      if (cluster.brokers.length > 0) return;
    } catch (error) {
      lastError = error;
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
    await sleep(300);
  }
  await killProcess(pid, 2000);
  throw new ServerSetupError(
    `Kafka: the broker did not become ready within ${READY_TIMEOUT_MS / 1000}s (${lastError?.message ?? 'no answer'}). See ${state.logFile}, or ${FIX}`,
  );
}

/** Formats storage in a fresh data directory with free ports; nothing is started yet. */
async function createKafkaState() {
  const java = findJava(17);
  if (!java) {
    throw new ServerSetupError(
      `Kafka: no Java 17 or newer found (JAVA_HOME, PATH, /usr/lib/jvm). Install a JDK (apt-get install openjdk-17-jre-headless) or ${FIX}`,
    );
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nestjs-outbox-kafka-'));
  const state = {
    dataDir,
    logFile: path.join(dataDir, 'broker.log'),
    propsFile: path.join(dataDir, 'server.properties'),
    // Every port outside the ephemeral range: the outage tests stop the broker and start it
    // again on the same ports.
    port: Number(process.env.OUTBOX_KAFKA_PORT) || (await restartablePort()),
  };
  // Four distinct ports (each is only checked free, not reserved, when picked).
  const distinctPort = async () => {
    let port;
    do port = await restartablePort();
    while (Object.values(state).includes(port));
    return port;
  };
  state.controllerPort = await distinctPort();
  // The fault listener and the port its proxy listens on (see brokerProperties).
  state.faultsPort = await distinctPort();
  state.faultsProxyPort = await distinctPort();
  fs.writeFileSync(
    state.propsFile,
    brokerProperties({ ...state, logDir: path.join(dataDir, 'data') }),
  );
  // 16 random bytes in base64url, as Kafka's own ids; one starting with '-' would be read by
  // the storage tool as an option (1 start in 64 failed with "expected one argument").
  let clusterId;
  do clusterId = crypto.randomBytes(16).toString('base64url');
  while (clusterId.startsWith('-'));
  const format = spawnSync(
    java.bin,
    [
      '-cp',
      path.join(JARS_DIR, '*'),
      'kafka.tools.StorageTool',
      'format',
      '-t',
      clusterId,
      '-c',
      state.propsFile,
    ],
    { encoding: 'utf8', timeout: 120000 },
  );
  if (format.status !== 0) {
    throw new ServerSetupError(
      `Kafka: formatting the broker storage failed (${(format.stderr || format.stdout).trim().split('\n').pop()}). ${FIX}`,
    );
  }
  return state;
}

async function stopKafkaProcess(pid) {
  await killProcess(pid, 15000);
}

module.exports = {
  KAFKA_VERSION,
  createKafkaState,
  ensureKafkaJars,
  startKafkaProcess,
  stopKafkaProcess,
};
