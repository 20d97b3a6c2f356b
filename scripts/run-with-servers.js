#!/usr/bin/env node
'use strict';
/**
 * Starts the servers the tests (or the benchmarks, or the demo) need on 127.0.0.1, runs a command
 * with their addresses in the environment, and stops what it started, also when the command fails
 * or is interrupted.
 *
 *   node scripts/run-with-servers.js -- <command> [args...]
 *
 * Kafka:   KAFKA_BROKERS when set, else a single-node KRaft broker from Maven Central jars.
 * MongoDB: MONGODB_URI when set, else mongodb-memory-server, else PoppyDB (POPPYDB_JAR or Maven).
 *          OUTBOX_TEST_MONGODB=optional lets the command run without MongoDB.
 * The command gets MONGODB_URI, KAFKA_BROKERS, OUTBOX_TEST_MONGODB_KIND (mongodb|poppydb|none),
 * OUTBOX_TEST_MONGODB_REASON and OUTBOX_TEST_STATE (a JSON file describing the managed broker).
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ServerSetupError } = require('./servers/common');
const kafka = require('./servers/kafka');
const { provisionMongo, redact } = require('./servers/mongodb');

const log = (line) => process.stderr.write(`[servers] ${line}\n`);

async function provisionKafka(statePath) {
  if (process.env.KAFKA_BROKERS) {
    return { brokers: process.env.KAFKA_BROKERS, managed: false };
  }
  const { downloaded } = await kafka.ensureKafkaJars(log);
  const state = await kafka.createKafkaState();
  try {
    state.pid = await kafka.startKafkaProcess(state);
  } catch (error) {
    fs.rmSync(state.dataDir, { recursive: true, force: true });
    throw error;
  }
  fs.writeFileSync(statePath, JSON.stringify({ kafka: state }, null, 2));
  return { brokers: `127.0.0.1:${state.port}`, managed: true, downloaded, state };
}

async function runWithServers(command) {
  const optionalMongo = process.env.OUTBOX_TEST_MONGODB === 'optional';
  const statePath = path.join(os.tmpdir(), `nestjs-outbox-servers-${process.pid}.json`);
  const started = Date.now();
  let mongo;
  let kafkaInfo;
  let child;

  // One teardown, awaited by whoever asks first or last (a signal and the child's exit can race).
  let teardownPromise;
  const teardown = () => (teardownPromise ??= stopServers());
  const stopServers = async () => {
    // Tests may restart the managed broker; the state file always names the current process.
    try {
      const state = JSON.parse(fs.readFileSync(statePath, 'utf8'));
      if (state.kafka?.pid) await kafka.stopKafkaProcess(state.kafka.pid);
      if (state.kafka?.dataDir) fs.rmSync(state.kafka.dataDir, { recursive: true, force: true });
    } catch {
      /* no managed broker */
    }
    fs.rmSync(statePath, { force: true });
    if (mongo) await mongo.stop().catch((e) => log(`MongoDB: stop failed: ${e.message}`));
  };

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, async () => {
      log(`${signal}: stopping servers`);
      if (child) child.kill(signal);
      await teardown();
      process.exit(130);
    });
  }

  try {
    // Assigned as each is ready, so a signal during start-up still stops what did start.
    await Promise.all([
      provisionKafka(statePath).then((k) => (kafkaInfo = k)),
      provisionMongo({ optional: optionalMongo, log }).then((m) => (mongo = m)),
    ]);
  } catch (error) {
    await teardown();
    const message =
      error instanceof ServerSetupError ? error.message : `server start-up failed: ${error.stack}`;
    process.stderr.write(`\n[servers] ${message}\n\n`);
    process.exit(1);
  }

  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  log(
    `Kafka ${kafkaInfo.brokers} (${kafkaInfo.managed ? `managed KRaft broker ${kafka.KAFKA_VERSION}${kafkaInfo.downloaded ? ', jars downloaded now' : ', cached jars'}` : 'KAFKA_BROKERS'})`,
  );
  log(
    mongo.kind === 'none'
      ? `MongoDB: none (${mongo.reason}); tests that need it are skipped and listed`
      : `MongoDB ${redact(mongo.uri)} (${mongo.kind}${mongo.version ? ' ' + mongo.version : ''}, ${mongo.source})`,
  );
  log(`servers ready in ${seconds}s`);

  const env = {
    ...process.env,
    KAFKA_BROKERS: kafkaInfo.brokers,
    OUTBOX_TEST_MONGODB_KIND: mongo.kind,
    OUTBOX_TEST_MONGODB_REASON: mongo.reason ?? '',
    OUTBOX_TEST_STATE: kafkaInfo.managed ? statePath : '',
  };
  if (mongo.uri) env.MONGODB_URI = mongo.uri;

  let code = 1;
  try {
    code = await new Promise((resolve) => {
      child = spawn(command[0], command.slice(1), { stdio: 'inherit', env });
      child.on('error', (error) => {
        log(`cannot run ${command[0]}: ${error.message}`);
        resolve(1);
      });
      child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
    });
  } finally {
    await teardown();
  }
  process.exit(code);
}

module.exports = { runWithServers };

if (require.main === module) {
  const sep = process.argv.indexOf('--');
  const command = sep >= 0 ? process.argv.slice(sep + 1) : [];
  if (command.length === 0) {
    log('usage: node scripts/run-with-servers.js -- <command> [args...]');
    process.exit(2);
  }
  runWithServers(command).catch((error) => {
    process.stderr.write(`[servers] ${error.stack}\n`);
    process.exit(1);
  });
}
