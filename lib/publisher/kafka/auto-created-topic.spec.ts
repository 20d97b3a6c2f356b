import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { KafkaPublisher } from './kafka.publisher';
import type { KafkaSender, PartitionCountOptions, TopicBatch } from './kafka.sender';
import { partitionOfKey } from './key.partitioner';
import { pendingEvent } from '../../../test/publisher/support/pending-event';

const unknownTopic = () =>
  Object.assign(new Error('This server does not host this topic-partition'), {
    name: 'KafkaJSProtocolError',
    type: 'UNKNOWN_TOPIC_OR_PARTITION',
  });

/**
 * A cluster whose topics do not exist until a metadata request with auto-creation asks for them
 * (when `creates`); its producer would accept a message without a partition and pick one itself
 * (platformatic's partitioner is not Kafka's), which the publisher must never let it do.
 */
class AutoCreatingCluster implements KafkaSender {
  readonly topics = new Map<string, number>();
  readonly sent: TopicBatch[] = [];
  readonly countRequests: Array<[string, PartitionCountOptions | undefined]> = [];
  constructor(private readonly creates: boolean) {}
  async connect(): Promise<void> {}
  async disconnect(): Promise<void> {}
  async replaceProducer(): Promise<void> {}
  async partitionCount(topic: string, options?: PartitionCountOptions): Promise<number> {
    this.countRequests.push([topic, options]);
    if (!this.topics.has(topic) && options?.autoCreate && this.creates) this.topics.set(topic, 6);
    const count = this.topics.get(topic);
    if (count === undefined) throw unknownTopic();
    return count;
  }
  async send(batches: readonly TopicBatch[]): Promise<void> {
    this.sent.push(...batches);
  }
}

const event = (aggregateId: string): OutboxEventRecord => pendingEvent(aggregateId, 'Fresh');

describe('allowAutoTopicCreation (the relay chooses every partition, Kafka`s way)', () => {
  it('an unknown topic is created through metadata, and every message goes to the partition of its key', async () => {
    const cluster = new AutoCreatingCluster(true);
    const publisher = new KafkaPublisher(
      { brokers: ['x:1'], allowAutoTopicCreation: true },
      cluster,
    );
    const events = Array.from({ length: 20 }, (_, i) => event(`order-${i}`));
    const outcomes = await publisher.publish(events);
    expect(outcomes.every((o) => o.status === 'ok')).toBe(true);
    const messages = cluster.sent.flatMap((batch) => batch.messages);
    expect(messages).toHaveLength(20);
    for (const message of messages) {
      expect(message.partition).toBe(partitionOfKey(message.key, 6));
    }
    expect(cluster.countRequests).toContainEqual(['Fresh', { autoCreate: true }]);
  });

  it('a topic still unknown after asking is held (topic, retriable): nothing is sent without a partition', async () => {
    const cluster = new AutoCreatingCluster(false);
    const publisher = new KafkaPublisher(
      { brokers: ['x:1'], allowAutoTopicCreation: true },
      cluster,
    );
    const outcomes = await publisher.publish([event('a'), event('b')]);
    expect(cluster.sent).toEqual([]);
    for (const outcome of outcomes) {
      expect(outcome).toMatchObject({
        status: 'retriable',
        scope: 'destination',
        destination: 'Fresh',
      });
    }
  });

  it('without allowAutoTopicCreation, an unknown topic is never created', async () => {
    const cluster = new AutoCreatingCluster(true);
    const publisher = new KafkaPublisher({ brokers: ['x:1'] }, cluster);
    const outcomes = await publisher.publish([event('a')]);
    expect(outcomes[0]).toMatchObject({ status: 'retriable', destination: 'Fresh' });
    expect(cluster.countRequests.every(([, options]) => !options?.autoCreate)).toBe(true);
    expect(cluster.sent).toEqual([]);
  });
});
