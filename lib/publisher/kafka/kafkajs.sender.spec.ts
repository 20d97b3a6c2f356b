import type { LoggerService } from '@nestjs/common';
import { KafkajsSender } from './kafkajs.sender';
import type { KafkaPublisherOptions } from './kafka-publisher.options';
import type { TopicBatch } from './kafka.sender';

const quiet: LoggerService = { log() {}, warn() {}, error() {} };

/**
 * kafkajs as the sender sees it: an admin that reads the cluster's partitions fresh, producers
 * that read a topic's partitions once (their metadata cache, 5 minutes by default) and leave
 * out of the request a message for a partition that cache does not have (kafkajs 2.2.4), and a
 * metadata request that creates an unknown topic when the producer allows auto-creation.
 */
class FakeKafka {
  readonly partitions = new Map<string, number>();
  readonly producers: FakeProducer[] = [];
  hangSends = false;

  producer(options: { allowAutoTopicCreation?: boolean }) {
    const producer = new FakeProducer(this, options.allowAutoTopicCreation ?? false);
    this.producers.push(producer);
    return producer;
  }

  admin() {
    return {
      connect: async () => {},
      disconnect: async () => {},
      fetchTopicMetadata: async ({ topics }: { topics: string[] }) => ({
        topics: topics.map((name) => ({
          name,
          partitions: Array.from({ length: this.partitions.get(name) ?? 0 }, (_, i) => ({
            partitionId: i,
          })),
        })),
      }),
    };
  }
}

class FakeProducer {
  readonly cached = new Map<string, number>();
  readonly stored: string[] = [];
  disconnected = false;

  constructor(
    private readonly kafka: FakeKafka,
    private readonly autoCreate: boolean,
  ) {}

  async connect(): Promise<void> {}
  async disconnect(): Promise<void> {
    this.disconnected = true;
  }

  sendBatch({ topicMessages }: { topicMessages: TopicBatch[] }) {
    if (this.kafka.hangSends) return new Promise(() => {});
    const answered = [];
    for (const { topic, messages } of topicMessages) {
      if (!this.kafka.partitions.has(topic) && this.autoCreate) this.kafka.partitions.set(topic, 3);
      if (!this.cached.has(topic)) this.cached.set(topic, this.kafka.partitions.get(topic) ?? 0);
      const known = this.cached.get(topic)!;
      for (const { partition, key } of messages) {
        if (partition === undefined || partition >= known) continue; // left out, silently
        this.stored.push(`${topic}#${partition}:${key}`);
        answered.push({ topicName: topic, partition, errorCode: 0 });
      }
    }
    return Promise.resolve(answered);
  }
}

function senderOn(kafka: FakeKafka, options: Partial<KafkaPublisherOptions> = {}) {
  const sender = new KafkajsSender({ brokers: ['127.0.0.1:9092'], ...options }, quiet);
  Object.assign(sender['kafka'], {
    producer: kafka.producer.bind(kafka),
    admin: kafka.admin.bind(kafka),
  });
  return sender;
}

const to = (topic: string, partition: number, key = 'k'): TopicBatch[] => [
  { topic, messages: [{ key, value: 'v', headers: {}, partition }] },
];

describe('KafkajsSender (against a fake kafkajs)', () => {
  it('a send the client never settles rejects with KafkaSendTimeoutError at sendTimeout', async () => {
    const kafka = new FakeKafka();
    kafka.partitions.set('orders', 2);
    kafka.hangSends = true;
    const sender = senderOn(kafka, { sendTimeout: 50 });
    const outcome = await Promise.race([
      sender.send(to('orders', 0)).catch((error: unknown) => error),
      new Promise((resolve) => setTimeout(() => resolve('still pending after 1 s'), 1000)),
    ]);
    expect(outcome).toMatchObject({ name: 'OutboxKafkaSendTimeout', timeoutMs: 50 });
  });

  it('after the topic gained partitions, a send to a new partition is refused until the producer is replaced (the publisher does it)', async () => {
    const kafka = new FakeKafka();
    kafka.partitions.set('orders', 2);
    const sender = senderOn(kafka);
    expect(await sender.partitionCount('orders')).toBe(2);
    await sender.send(to('orders', 1));
    kafka.partitions.set('orders', 4);
    expect(await sender.partitionCount('orders')).toBe(4);
    // The sender does not replace its producer on its own: the producer still knows 2.
    await expect(sender.send(to('orders', 3))).rejects.toMatchObject({
      name: 'OutboxPartitionNotInMetadata',
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
      retriable: true,
      partition: 3,
    });
    await sender.replaceProducer();
    await sender.send(to('orders', 3));
    expect(kafka.producers.flatMap((p) => p.stored)).toEqual(['orders#1:k', 'orders#3:k']);
    // The producer that knew 2 partitions is closed once its sends settled.
    expect(kafka.producers[0].disconnected).toBe(true);
  });

  it('partitionCount with autoCreate lets the broker create the topic (auto-creation allowed)', async () => {
    const kafka = new FakeKafka();
    const sender = senderOn(kafka, { allowAutoTopicCreation: true });
    await expect(sender.partitionCount('fresh')).rejects.toMatchObject({
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
    });
    expect(await sender.partitionCount('fresh', { autoCreate: true })).toBe(3);
  });

  it('replaceProducer: the next send uses a new producer; the old one is closed', async () => {
    const kafka = new FakeKafka();
    kafka.partitions.set('orders', 2);
    const sender = senderOn(kafka);
    await sender.send(to('orders', 0));
    await sender.replaceProducer();
    await sender.send(to('orders', 1));
    expect(kafka.producers).toHaveLength(2);
    expect(kafka.producers[0].disconnected).toBe(true);
    expect(kafka.producers[1].stored).toEqual(['orders#1:k']);
    await sender.disconnect();
    expect(kafka.producers[1].disconnected).toBe(true);
  });
});
