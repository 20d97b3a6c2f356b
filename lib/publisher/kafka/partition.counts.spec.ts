import { partitionNotInMetadataError } from './kafka.sender';
import type { KafkaSender, TopicBatch } from './kafka.sender';
import { KafkaPublisher } from './kafka.publisher';
import { METADATA_TTL_MS, PartitionCounts } from './partition.counts';

/** Counts per topic; a producer whose metadata is the count it was created with. */
class GrowingSender implements KafkaSender {
  readonly partitions = new Map<string, number>();
  replaced = 0;
  reads = 0;
  /** What the current producer's metadata knows, per topic. */
  private producerKnows = new Map<string, number>();
  async connect(): Promise<void> {}
  async disconnect(): Promise<void> {}
  async replaceProducer(): Promise<void> {
    this.replaced++;
    this.producerKnows = new Map(this.partitions);
  }
  async partitionCount(topic: string): Promise<number> {
    this.reads++;
    const count = this.partitions.get(topic) ?? 0;
    if (!this.producerKnows.has(topic)) this.producerKnows.set(topic, count);
    return count;
  }
  async send(batches: readonly TopicBatch[]): Promise<void> {
    for (const { topic, messages } of batches)
      for (const { partition } of messages)
        if (partition !== undefined && partition >= (this.producerKnows.get(topic) ?? 0))
          throw partitionNotInMetadataError(topic, partition);
  }
}

describe('PartitionCounts', () => {
  it('reads a count once per METADATA_TTL_MS, and replaces the producer only when a count grows', async () => {
    const sender = new GrowingSender();
    sender.partitions.set('orders', 2);
    let now = 0;
    const counts = new PartitionCounts(sender, () => now);
    expect(await counts.read('orders')).toBe(2);
    expect(await counts.read('orders')).toBe(2);
    expect(sender.reads).toBe(1);
    sender.partitions.set('orders', 4);
    now += METADATA_TTL_MS;
    expect(await counts.read('orders')).toBe(4);
    expect(sender.replaced).toBe(1);
    // A smaller count (a topic recreated) is used, and replaces nothing.
    sender.partitions.set('orders', 3);
    counts.forget('orders');
    expect(counts.known('orders')).toBeUndefined();
    expect(await counts.read('orders')).toBe(3);
    expect(sender.replaced).toBe(1);
    // Forgetting a topic keeps the largest count read: growing back to 4 is no growth.
    sender.partitions.set('orders', 4);
    counts.forget('orders');
    expect(await counts.read('orders')).toBe(4);
    expect(sender.replaced).toBe(1);
  });
});

describe('KafkaPublisher with a producer whose metadata lags', () => {
  const event = (id: string) => ({
    _id: id as never,
    eventId: `evt-${id}`,
    eventType: 'Happened',
    aggregateType: 'orders',
    aggregateId: id,
    payload: {},
    occurredAt: new Date(0),
    status: 'pending' as const,
    attempts: 0,
  });

  it('after a send found a partition its producer lacks, the next send uses a new producer and is stored', async () => {
    const sender = new GrowingSender();
    sender.partitions.set('orders', 1);
    let now = 0;
    const publisher = new KafkaPublisher({ brokers: ['x:1'] }, sender, () => now);
    expect(await publisher.publish([event('a')])).toEqual([{ status: 'ok' }]);
    // The topic gains partitions; the producer (made when it had 1) does not know them.
    sender.partitions.set('orders', 8);
    sender.replaced = 0;
    now += METADATA_TTL_MS;
    const events = Array.from({ length: 16 }, (_, i) => event(`b${i}`));
    const outcomes = await publisher.publish(events);
    // The count grew: the producer was replaced before the send, and every event was stored.
    expect(sender.replaced).toBeGreaterThanOrEqual(1);
    expect(outcomes.every((outcome) => outcome.status === 'ok')).toBe(true);
  });

  it('a send refused as OutboxPartitionNotInMetadata replaces the producer before the groups are sent again', async () => {
    const sender = new GrowingSender();
    // The producer read the topic when it had 1 partition; the publisher first reads it at 8.
    sender.partitions.set('orders', 1);
    await sender.partitionCount('orders');
    sender.partitions.set('orders', 8);
    const publisher = new KafkaPublisher({ brokers: ['x:1'] }, sender, () => 0);
    const events = Array.from({ length: 16 }, (_, i) => event(`c${i}`));
    const outcomes = await publisher.publish(events);
    // The first send was refused for partitions 1-7; the groups sent again went through a new one.
    expect(sender.replaced).toBe(1);
    expect(outcomes.every((outcome) => outcome.status === 'ok')).toBe(true);
  });
});
