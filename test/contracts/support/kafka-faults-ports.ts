import type { KafkaSender } from '../../../lib/publisher/kafka/kafka.sender';
import type { KafkaConnectionOptions } from '../../../lib/publisher/kafka/kafka-publisher.options';
import {
  createTopics,
  startFaultProxy,
  startKafka,
  stopKafka,
  testKafka,
  uniqueName,
  waitFor,
} from '../../harness';
import { FAULT_RETRIES } from '../kafka.sender.faults.contract';
import type { FaultSenderOptions, KafkaSenderFaultsFixture } from '../kafka.sender.faults.contract';
import { storedOn } from './kafka-ports';

/** What differs between the clients: how a sender is made, and how its process's clock is set. */
export interface FaultClient {
  create(options: KafkaConnectionOptions): Promise<KafkaSender>;
  skewClock(sender: KafkaSender, ms: number): Promise<void>;
}

/**
 * A topic of two partitions, created. On this loaded machine kafkajs' admin sometimes fails its
 * wait for the leaders (UNKNOWN_TOPIC_OR_PARTITION from its metadata poll) although the topic
 * was created: then its metadata is awaited directly.
 */
async function createdTopic(name: string, config: Record<string, string>): Promise<void> {
  try {
    await createTopics([name], 2, config);
  } catch (error) {
    const admin = testKafka('outbox-contract-admin').admin();
    await admin.connect();
    try {
      await waitFor(
        () =>
          admin.fetchTopicMetadata({ topics: [name] }).then(
            ({ topics }) => topics[0]?.partitions.every((p) => p.leader >= 0) ?? false,
            () => false,
          ),
        15_000,
        `topic ${name} created (${String(error)})`,
      );
    } finally {
      await admin.disconnect();
    }
  }
}

/** The connection options of every sender of the fault suite (brokers: the proxy). */
export function faultSenderOptions(
  broker: string,
  options: FaultSenderOptions,
): KafkaConnectionOptions {
  return {
    brokers: [broker],
    clientId: 'outbox-contract-faults',
    connectionTimeout: 1_000,
    requestTimeout: options.requestTimeout ?? 5_000,
    retry: { retries: FAULT_RETRIES, initialRetryTime: 50, maxRetryTime: 200 },
    idempotent: options.idempotent,
  };
}

/**
 * The fault suite's fixture for one client: a fresh two-partition topic, the fault proxy in
 * front of the broker's fault listener, senders of `client` on the proxy; topics are read and
 * changed on the direct listener.
 */
export async function kafkaSenderFaultsFixture(
  client: FaultClient,
): Promise<KafkaSenderFaultsFixture> {
  const topic = uniqueName('contract-faults');
  const topics = [topic];
  await createdTopic(topic, {});
  const proxy = await startFaultProxy();
  const senders: KafkaSender[] = [];
  const admin = async <T>(
    work: (a: ReturnType<ReturnType<typeof testKafka>['admin']>) => Promise<T>,
  ) => {
    const a = testKafka('outbox-contract-admin').admin();
    await a.connect();
    try {
      return await work(a);
    } finally {
      await a.disconnect();
    }
  };
  return {
    proxy,
    topic,
    sender: async (options) => {
      const sender = await client.create(faultSenderOptions(proxy.broker, options));
      senders.push(sender);
      return sender;
    },
    stored: storedOn,
    createTopic: async (config) => {
      const name = uniqueName('contract-faults');
      topics.push(name);
      await createdTopic(name, config);
      return name;
    },
    addPartitions: (name, total) =>
      admin((a) => a.createPartitions({ topicPartitions: [{ topic: name, count: total }] })).then(
        () => undefined,
      ),
    restartBroker: async (between) => {
      await stopKafka();
      try {
        await between();
      } finally {
        await startKafka();
      }
    },
    skewClock: (sender, ms) => client.skewClock(sender, ms),
    close: async () => {
      await proxy.close();
      for (const sender of senders) await sender.disconnect();
      await admin((a) => a.deleteTopics({ topics })).catch(() => undefined);
    },
  };
}
