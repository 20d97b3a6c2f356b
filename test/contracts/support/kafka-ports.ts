import type { LoggerService } from '@nestjs/common';
import { KafkajsSender } from '../../../lib/publisher/kafka/kafkajs.sender';
import { createTopics, readTopicSnapshot, testKafka, testServers, uniqueName } from '../../harness';
import { CONTRACT_MESSAGE_MAX_BYTES } from '../kafka.sender.contract';
import type { KafkaSenderFixture } from '../kafka.sender.contract';
import type { FaultClient } from './kafka-faults-ports';

/** kafkajs' own warnings are expected here (unknown topics, oversize messages). */
const quiet: LoggerService = {
  log: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
};

/** A broker address nobody listens on (connections are refused at once). */
export const UNREACHABLE_BROKER = '127.0.0.1:1';

/** What `topic` holds: each partition's `ce_id` headers in offset order. */
export async function storedOn(topic: string): Promise<Record<number, string[]>> {
  const stored: Record<number, string[]> = {};
  for (const record of await readTopicSnapshot(topic)) {
    (stored[record.partition] ??= []).push(record.headers.ce_id);
  }
  return stored;
}

/** `KafkajsSender` (lib/publisher/kafka) on the run's broker, with a fresh topic. */
export async function kafkajsSenderFixture(): Promise<KafkaSenderFixture> {
  const topic = uniqueName('contract-sender');
  await createTopics([topic], 2, { 'max.message.bytes': String(CONTRACT_MESSAGE_MAX_BYTES) });
  const sender = new KafkajsSender(
    {
      brokers: testServers().kafkaBrokers,
      clientId: 'outbox-contract',
      retry: { retries: 2, initialRetryTime: 50, maxRetryTime: 200 },
    },
    quiet,
  );
  return {
    sender,
    topic,
    missingTopic: uniqueName('contract-missing'),
    stored: storedOn,
    unreachable: () =>
      Promise.resolve(
        new KafkajsSender(
          {
            brokers: [UNREACHABLE_BROKER],
            clientId: 'outbox-contract',
            connectionTimeout: 300,
            retry: { retries: 1, initialRetryTime: 50, maxRetryTime: 100 },
          },
          quiet,
        ),
      ),
    close: async () => {
      const admin = testKafka('outbox-contract-admin').admin();
      await admin.connect();
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    },
  };
}

/** This process's clock, before `kafkajsFaultClient.skewClock` shifts it. */
const realNow = Date.now.bind(Date);

/** The fault suite's client: `KafkajsSender` in this process (see kafka-faults-ports.ts). */
export const kafkajsFaultClient: FaultClient = {
  create: (options) => Promise.resolve(new KafkajsSender(options, quiet)),
  // kafkajs stamps each record with `Date.now()` when it builds the request.
  skewClock: (_sender, ms) => {
    Date.now = ms === 0 ? realNow : () => realNow() + ms;
    return Promise.resolve();
  },
};
