import { readFileSync, writeFileSync } from 'node:fs';
import { ConfigResourceTypes, Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import { testServers, uniqueName } from './servers';

// The runner's own start/stop code, so a restarted broker is the same broker (ports, data dir).
const broker = require('../../scripts/servers/kafka') as {
  startKafkaProcess(state: unknown): Promise<number>;
  stopKafkaProcess(pid: number): Promise<void>;
};

export interface KafkaRecord {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
  /** The record's timestamp (ms): the producer's clock when it was sent (CreateTime). */
  timestamp: number;
}

export function testKafka(clientId = 'outbox-test'): Kafka {
  const brokers = testServers().kafkaBrokers;
  if (brokers.length === 0)
    throw new Error('no Kafka in this run (guard the test with describeWith)');
  return new Kafka({ clientId, brokers, logLevel: logLevel.NOTHING });
}

export async function createTopics(
  topics: string[],
  partitions = 3,
  config: Record<string, string> = {},
): Promise<void> {
  const admin = testKafka('outbox-test-admin').admin();
  await admin.connect();
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: topics.map((topic) => ({
        topic,
        numPartitions: partitions,
        replicationFactor: 1,
        configEntries: Object.entries(config).map(([name, value]) => ({ name, value })),
      })),
    });
  } finally {
    await admin.disconnect();
  }
}

/** Changes topic settings, e.g. `{ 'max.message.bytes': '1048588' }`. */
export async function alterTopic(topic: string, config: Record<string, string>): Promise<void> {
  const admin = testKafka('outbox-test-admin').admin();
  await admin.connect();
  try {
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: topic,
          configEntries: Object.entries(config).map(([name, value]) => ({ name, value })),
        },
      ],
    });
  } finally {
    await admin.disconnect();
  }
}

/** How many records `topic` holds now: the sum of its partitions' high watermarks. */
export async function topicRecordCount(topic: string): Promise<number> {
  const admin = testKafka('outbox-test-admin').admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.reduce((sum, { high, low }) => sum + Number(high) - Number(low), 0);
  } finally {
    await admin.disconnect();
  }
}

function headersOf(headers: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined || value === null) continue;
    out[name] = Array.isArray(value) ? value.map(String).join(',') : value.toString();
  }
  return out;
}

function recordOf(topic: string, partition: number, message: KafkaMessage): KafkaRecord {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key?.toString() ?? null,
    value: message.value?.toString() ?? null,
    headers: headersOf(message.headers as Record<string, unknown>),
    timestamp: Number(message.timestamp),
  };
}

/**
 * Reads `count` records of `topic` (from the beginning by default) with a fresh consumer group,
 * or whatever arrived when `timeoutMs` passes. Records keep their partition order.
 */
export async function readTopic(
  topic: string,
  opts: { count: number; timeoutMs?: number; fromBeginning?: boolean },
): Promise<KafkaRecord[]> {
  const consumer = testKafka('outbox-test-reader').consumer({
    groupId: uniqueName('reader'),
    maxWaitTimeInMs: 200,
  });
  const records: KafkaRecord[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: opts.fromBeginning ?? true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, opts.timeoutMs ?? 30000);
      consumer
        .run({
          eachMessage: async ({ message, partition }) => {
            records.push(recordOf(topic, partition, message));
            if (records.length >= opts.count) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return records;
}

/**
 * Every record `topic` held when it was called: each partition read up to the high watermark
 * it had then, whatever is appended meanwhile. Unlike a count (`readTopic`), records written
 * to other partitions while it reads cannot stand in for the ones it has not reached yet.
 * Throws when a partition is not read up to its mark within `timeoutMs`.
 */
export async function readTopicSnapshot(topic: string, timeoutMs = 20_000): Promise<KafkaRecord[]> {
  const admin = testKafka('outbox-test-admin').admin();
  await admin.connect();
  const marks = new Map<number, number>();
  try {
    for (const { partition, high, low } of await admin.fetchTopicOffsets(topic)) {
      if (Number(high) > Number(low)) marks.set(partition, Number(high));
    }
  } finally {
    await admin.disconnect();
  }
  if (marks.size === 0) return [];
  const unread = new Set(marks.keys());
  const records: KafkaRecord[] = [];
  const consumer = testKafka('outbox-test-reader').consumer({
    groupId: uniqueName('reader'),
    maxWaitTimeInMs: 200,
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `read of ${topic} timed out: partitions ${[...unread].join(', ')} not read up to their marks`,
            ),
          ),
        timeoutMs,
      );
      consumer
        .run({
          eachMessage: async ({ message, partition }) => {
            const mark = marks.get(partition);
            const offset = Number(message.offset);
            if (mark === undefined || offset >= mark) return;
            records.push(recordOf(topic, partition, message));
            if (offset === mark - 1) unread.delete(partition);
            if (unread.size === 0) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch((error: unknown) => {
          clearTimeout(timer);
          reject(error as Error);
        });
    });
  } finally {
    await consumer.disconnect();
  }
  return records;
}

interface BrokerState {
  kafka: { pid?: number };
}

function brokerState(): { file: string; state: BrokerState } {
  const file = testServers().kafkaStateFile;
  if (!file) throw new Error('the broker is not managed by this run (guard with managed-kafka)');
  return { file, state: JSON.parse(readFileSync(file, 'utf8')) as BrokerState };
}

/** Stops the managed broker (SIGTERM, then SIGKILL). */
export async function stopKafka(): Promise<void> {
  const { file, state } = brokerState();
  if (state.kafka.pid) await broker.stopKafkaProcess(state.kafka.pid);
  state.kafka.pid = undefined;
  writeFileSync(file, JSON.stringify(state, null, 2));
}

/** Starts the managed broker again, same ports and data; resolves when it answers. */
export async function startKafka(): Promise<void> {
  const { file, state } = brokerState();
  state.kafka.pid = await broker.startKafkaProcess(state.kafka);
  writeFileSync(file, JSON.stringify(state, null, 2));
}
