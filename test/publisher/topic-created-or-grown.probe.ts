/**
 * A probe on the real broker (not a Jest spec: platformatic runs outside Jest's module sandbox):
 * `node scripts/run-with-servers.js -- node -r ts-node/register/transpile-only test/publisher/topic-created-or-grown.probe.ts`.
 * For each client, a KafkaPublisher (1) publishes to a topic that does not exist with
 * allowAutoTopicCreation, (2) publishes to a topic that gained partitions since its producer
 * read it, (3) with idempotent, after replaceProducer. Every event must be ok and stored on the
 * partition of its key (Kafka's default partitioner over the topic's count).
 */
import type { OutboxEventRecord } from '../../lib/documents/outbox-event.document';
import { KafkaPublisher } from '../../lib/publisher/kafka/kafka.publisher';
import type { KafkaClientName } from '../../lib/publisher/kafka/kafka.sender';
import { partitionOfKey } from '../../lib/publisher/kafka/key.partitioner';
import { createTopics, readTopic, testKafka, testServers, uniqueName } from '../harness';

let n = 0;
const events = (topic: string, count: number): OutboxEventRecord[] =>
  Array.from({ length: count }, () => {
    n++;
    return {
      _id: `id-${n}` as never,
      eventId: `probe-${n}`,
      eventType: 'Probed',
      aggregateType: topic,
      aggregateId: `aggregate-${n}`,
      payload: { n },
      occurredAt: new Date(),
      status: 'pending',
      attempts: 0,
    };
  });

async function check(
  topic: string,
  sent: OutboxEventRecord[],
  count: number,
  earlier: { events: OutboxEventRecord[]; count: number } = { events: [], count },
): Promise<string> {
  const old = new Set(earlier.events.map((e) => e.eventId));
  const admin = testKafka('probe-offsets').admin();
  await admin.connect();
  let total = 0;
  for (const offset of await admin.fetchTopicOffsets(topic)) total += Number(offset.high);
  await admin.disconnect();
  const records = await readTopic(topic, { count: total, timeoutMs: 20_000 });
  const misplaced = records.filter(
    (r) =>
      r.partition !== partitionOfKey(r.key ?? '', old.has(r.headers.ce_id) ? earlier.count : count),
  );
  const ids = new Set(records.map((r) => r.headers.ce_id));
  const missing = [...sent, ...earlier.events].filter((e) => !ids.has(e.eventId)).length;
  const duplicates = records.length - ids.size;
  return `${records.length} records, ${missing} events missing, ${duplicates} duplicates, ${misplaced.length} on another partition than Kafka's`;
}

async function probe(client: KafkaClientName, idempotent: boolean): Promise<void> {
  const brokers = testServers().kafkaBrokers;
  let clock = Date.now();
  const now = () => clock;
  const publisher = new KafkaPublisher(
    { brokers, client, idempotent, allowAutoTopicCreation: true },
    undefined,
    now,
  );
  await publisher.connect();
  const label = `${client}${idempotent ? ' idempotent' : ''}`;
  try {
    // (1) A topic that does not exist yet. The test broker runs with
    // auto.create.topics.enable=false: the events must be held as a topic, nothing sent.
    const fresh = uniqueName('probe-auto');
    const first = events(fresh, 30);
    const outcomes = await publisher.publish(first);
    const admin = testKafka('probe-admin').admin();
    await admin.connect();
    const exists = (await admin.listTopics()).includes(fresh);
    const scopes = new Set(
      outcomes.map((o) => (o.status === 'retriable' ? o.destination : o.status)),
    );
    console.log(
      `${label} unknown topic, auto-creation refused by the broker: exists=${exists}, outcomes=${[...scopes].join(',')}`,
    );
    if (exists)
      console.log(
        `${label} auto-created: ${await check(fresh, first, (await admin.fetchTopicMetadata({ topics: [fresh] })).topics[0].partitions.length)}`,
      );

    // (2) A topic that gains partitions while the producer has it cached.
    const growing = uniqueName('probe-grow');
    await createTopics([growing], 2);
    const before = events(growing, 20);
    const ok1 = (await publisher.publish(before)).filter((o) => o.status === 'ok').length;
    await admin.createPartitions({ topicPartitions: [{ topic: growing, count: 6 }] });
    clock += 6 * 60_000; // the publisher reads the count again
    const after = events(growing, 40);
    const outcomes2 = await publisher.publish(after);
    const held = outcomes2.filter((o) => o.status !== 'ok');
    console.log(
      `${label} grown 2 -> 6: before ${ok1}/20 ok; after ${40 - held.length}/40 ok` +
        (held.length ? ` (held: ${JSON.stringify(held[0]).slice(0, 200)})` : ''),
    );
    console.log(
      `${label} grown, stored after: ${await check(growing, after, 6, { events: before, count: 2 }).catch(String)}`,
    );
    await admin.disconnect();
  } finally {
    await publisher.disconnect();
  }
}

async function main(): Promise<void> {
  for (const client of ['kafkajs', 'platformatic'] as const) {
    for (const idempotent of [false, true]) await probe(client, idempotent);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
