import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

export type MongoKind = 'mongodb' | 'poppydb' | 'none';

export interface TestServers {
  /** The replica set's URI (no database), when there is one. */
  mongoUri?: string;
  /** `mongodb`: a real mongod; `poppydb`: the PoppyDB stand-in; `none`: no MongoDB on this machine. */
  mongoKind: MongoKind;
  /** Why there is no MongoDB, when `mongoKind` is `none`. */
  mongoReason?: string;
  kafkaBrokers: string[];
  /** Set when the runner manages the broker (tests may stop and restart it). */
  kafkaStateFile?: string;
}

/**
 * What the runner (`scripts/run-with-servers.js`) started. Without the runner, MONGODB_URI and
 * KAFKA_BROKERS are taken as given and the server is assumed to be a real mongod.
 */
export function testServers(): TestServers {
  const env = process.env;
  const mongoUri = env.MONGODB_URI || undefined;
  const kind =
    (env.OUTBOX_TEST_MONGODB_KIND as MongoKind | undefined) || (mongoUri ? 'mongodb' : 'none');
  return {
    mongoUri,
    mongoKind: mongoUri ? kind : 'none',
    mongoReason:
      env.OUTBOX_TEST_MONGODB_REASON || (mongoUri ? undefined : 'MONGODB_URI is not set'),
    kafkaBrokers: (env.KAFKA_BROKERS ?? '')
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean),
    kafkaStateFile: env.OUTBOX_TEST_STATE || undefined,
  };
}

/**
 * The managed broker's fault listener (scripts/servers/kafka.js): the port it listens on and the
 * port it advertises, where a test's Kafka fault proxy listens. Unset without a managed broker.
 */
export function faultListenerPorts(): { listenerPort: number; proxyPort: number } | undefined {
  const file = testServers().kafkaStateFile;
  if (!file) return undefined;
  const { kafka } = JSON.parse(readFileSync(file, 'utf8')) as {
    kafka?: { faultsPort?: number; faultsProxyPort?: number };
  };
  if (!kafka?.faultsPort || !kafka.faultsProxyPort) return undefined;
  return { listenerPort: kafka.faultsPort, proxyPort: kafka.faultsProxyPort };
}

/** A name unique to this run, safe as a database, topic or group id: [a-z0-9_-]. */
export function uniqueName(prefix: string): string {
  const clean = prefix.toLowerCase().replace(/[^a-z0-9_-]/g, '-');
  return `${clean}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

/** The test replica set's URI pointing at `dbName` (keeps the query string). */
export function mongoUriFor(dbName: string): string {
  const uri = testServers().mongoUri;
  if (!uri)
    throw new Error('mongoUriFor: no MongoDB in this run (guard the test with describeWith)');
  const url = new URL(uri);
  url.pathname = `/${dbName}`;
  return url.toString();
}

/** The replica set runs on this machine (every host a loopback address): it reads this machine's clock. */
export function databaseOnThisMachine(): boolean {
  const hosts = /^mongodb(?:\+srv)?:\/\/(?:[^@/]*@)?([^/?]+)/.exec(testServers().mongoUri ?? '');
  return (
    hosts !== null &&
    hosts[1]
      .split(',')
      .every((host) => /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/.test(host))
  );
}
