import { existsSync } from 'node:fs';
import { faultListenerPorts, testServers } from './servers';

/** Debian's Chromium, which the browser tests drive with playwright-core (never a downloaded browser). */
export const CHROMIUM_PATH = process.env.OUTBOX_CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * What a block of tests needs to prove its claim:
 * - `mongodb`: any MongoDB replica set (a real mongod or PoppyDB);
 * - `real-mongodb`: a claim only real MongoDB can prove (atomic abort seen by change streams,
 *   concurrent transactions, transient-error retries, commit order);
 * - `kafka`: a Kafka broker;
 * - `managed-kafka`: a broker the test may stop and restart (started by the runner);
 * - `kafka-faults`: the managed broker's fault listener, behind which a test runs the Kafka
 *   fault proxy (test/harness/kafka-fault-proxy);
 * - `chromium`: Debian's Chromium at `CHROMIUM_PATH` (the console's browser tests).
 */
export type Need =
  'mongodb' | 'real-mongodb' | 'kafka' | 'managed-kafka' | 'kafka-faults' | 'chromium';

export function unmetNeeds(needs: Need[]): string[] {
  const servers = testServers();
  const reasons: string[] = [];
  for (const need of needs) {
    if (need === 'mongodb' && servers.mongoKind === 'none') {
      reasons.push('needs a MongoDB replica set, none in this run');
    }
    if (need === 'real-mongodb' && servers.mongoKind !== 'mongodb') {
      reasons.push(
        servers.mongoKind === 'none'
          ? 'needs real MongoDB, none in this run'
          : `needs real MongoDB, not ${servers.mongoKind}`,
      );
    }
    if (need === 'kafka' && servers.kafkaBrokers.length === 0) {
      reasons.push('needs Kafka: KAFKA_BROKERS is not set (run through npm test)');
    }
    if (need === 'managed-kafka' && !servers.kafkaStateFile) {
      reasons.push(
        'needs a broker the test can stop and restart (started by npm test, not KAFKA_BROKERS)',
      );
    }
    if (need === 'kafka-faults' && !faultListenerPorts()) {
      reasons.push(
        'needs the managed broker’s fault listener for the Kafka fault proxy (started by npm test, not KAFKA_BROKERS)',
      );
    }
    if (need === 'chromium' && !existsSync(CHROMIUM_PATH)) {
      reasons.push(
        `needs Chromium at ${CHROMIUM_PATH} (apt-get install chromium; .ci/run installs it)`,
      );
    }
  }
  return [...new Set(reasons)];
}

/**
 * `describe` for tests that need servers. When a need is unmet, the whole block is registered as
 * skipped with the reason in its name; the skip reporter lists every such test with that reason.
 */
export function describeWith(needs: Need[], name: string, fn: () => void): void {
  const unmet = unmetNeeds(needs);
  if (unmet.length === 0) {
    describe(name, fn);
  } else {
    describe.skip(`${name} [skipped: ${unmet.join('; ')}]`, fn);
  }
}
