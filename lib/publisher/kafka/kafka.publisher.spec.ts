import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { KafkaPublisher } from './kafka.publisher';
import type { KafkaSender, TopicBatch } from './kafka.sender';

const protocol = (type: string) =>
  Object.assign(new Error(type), { name: 'KafkaJSProtocolError', type });

/** A cluster in memory: partitions per topic, and a function that may refuse a (topic, partition). */
class FakeSender implements KafkaSender {
  readonly stored: Array<{ topic: string; partition?: number; key: string }> = [];
  readonly calls: TopicBatch[][] = [];
  refuse: (
    topic: string,
    partition: number | undefined,
    bytes: number,
    count: number,
  ) => Error | undefined = () => undefined;
  constructor(private readonly partitions: Record<string, number>) {}
  async connect(): Promise<void> {}
  async disconnect(): Promise<void> {}
  async replaceProducer(): Promise<void> {}
  async partitionCount(topic: string): Promise<number> {
    const count = this.partitions[topic];
    if (!count) throw protocol('UNKNOWN_TOPIC_OR_PARTITION');
    return count;
  }
  async send(batches: readonly TopicBatch[]): Promise<void> {
    this.calls.push([...batches]);
    let failure: Error | undefined;
    for (const batch of batches) {
      const byPartition = new Map<number | undefined, typeof batch.messages>();
      for (const message of batch.messages) {
        byPartition.set(message.partition, [
          ...(byPartition.get(message.partition) ?? []),
          message,
        ]);
      }
      for (const [partition, messages] of byPartition) {
        const bytes = messages.reduce((sum, m) => sum + m.value.length, 0);
        const refused = this.refuse(batch.topic, partition, bytes, messages.length);
        if (refused) failure ??= refused;
        else
          for (const m of messages) this.stored.push({ topic: batch.topic, partition, key: m.key });
      }
    }
    if (failure)
      throw Object.assign(new Error('retries exceeded'), {
        name: 'KafkaJSNumberOfRetriesExceeded',
        originalError: failure,
      });
  }
}

let n = 0;
function event(
  aggregateType: string,
  aggregateId: string,
  payload: Record<string, unknown> = {},
): OutboxEventRecord {
  n++;
  return {
    _id: `id-${n}` as never,
    eventId: `evt-${n}`,
    eventType: 'Happened',
    aggregateType,
    aggregateId,
    payload,
    occurredAt: new Date(0),
    status: 'pending',
    attempts: 0,
  };
}

describe('KafkaPublisher (what fails is held back alone)', () => {
  it('one refusing partition in a mixed-topic batch fails only its own events, as a destination', async () => {
    // Defect: one partition's NOT_ENOUGH_REPLICAS marked the whole batch as a broker outage.
    const sender = new FakeSender({ Order: 4, Invoice: 2 });
    const publisher = new KafkaPublisher({ brokers: ['x:1'] }, sender);
    const events = Array.from({ length: 24 }, (_, i) =>
      event(i % 2 ? 'Order' : 'Invoice', `a${i}`),
    );
    const bad = publisher.destinationsOf(events[1]); // unknown before metadata: topic only
    expect(bad).toEqual(['Order']);
    await publisher.publish([events[1]]);
    const [, badPartition] = publisher.destinationsOf(events[1]);
    sender.refuse = (topic, partition) =>
      `${topic}#${partition}` === badPartition ? protocol('NOT_ENOUGH_REPLICAS') : undefined;
    const outcomes = await publisher.publish(events);
    events.forEach((e, i) => {
      const [, destination] = publisher.destinationsOf(e);
      if (destination === badPartition) {
        expect(outcomes[i]).toMatchObject({
          status: 'retriable',
          scope: 'destination',
          destination: badPartition,
        });
      } else expect(outcomes[i]).toEqual({ status: 'ok' });
    });
  });

  it('an unauthorized topic is held back as a topic, the rest goes out', async () => {
    const sender = new FakeSender({ Order: 1, Secret: 1 });
    sender.refuse = (topic) =>
      topic === 'Secret' ? protocol('TOPIC_AUTHORIZATION_FAILED') : undefined;
    const publisher = new KafkaPublisher({ brokers: ['x:1'] }, sender);
    const outcomes = await publisher.publish([event('Order', 'o'), event('Secret', 's')]);
    expect(outcomes[0]).toEqual({ status: 'ok' });
    expect(outcomes[1]).toMatchObject({
      status: 'retriable',
      scope: 'destination',
      destination: 'Secret',
    });
  });

  it('sends nothing once the relay may no longer send (read right before the send), and forgets the relay signal after the call', async () => {
    const sender = new FakeSender({ Order: 2 });
    const publisher = new KafkaPublisher({ brokers: ['x:1'] }, sender);
    const relay = new AbortController();
    const listeners = jest.spyOn(relay.signal, 'removeEventListener');
    let allowed = true;
    // The relay's check passes when the batch is taken; its lease runs out before the send.
    const ready = sender.partitionCount.bind(sender);
    sender.partitionCount = async (topic) => {
      allowed = false;
      return ready(topic);
    };
    const outcomes = await publisher.publish([event('Order', 'a'), event('Order', 'b')], {
      signal: relay.signal,
      mayStillSend: () => allowed,
    });
    expect(sender.calls).toHaveLength(0);
    expect(outcomes.map((o) => o.status)).toEqual(['retriable', 'retriable']);
    expect(outcomes[0]).toMatchObject({ error: { name: 'SendAbortedError' } });
    expect(listeners).toHaveBeenCalledWith('abort', expect.any(Function));
  });

  it('a connection failure is the broker, for every event', async () => {
    const sender = new FakeSender({ Order: 2 });
    sender.refuse = () =>
      Object.assign(new Error('connect ECONNREFUSED'), { name: 'KafkaJSConnectionError' });
    const publisher = new KafkaPublisher({ brokers: ['x:1'] }, sender);
    const outcomes = await publisher.publish([
      event('Order', 'a'),
      event('Order', 'b'),
      event('Order', 'c'),
    ]);
    expect(outcomes.every((o) => o.status === 'retriable' && o.scope === 'broker')).toBe(true);
  });

  it('a group too large for the broker is split; only a message too large alone is fatal, in order per aggregate', async () => {
    const sender = new FakeSender({ Order: 1 });
    sender.refuse = (_topic, _partition, bytes) =>
      bytes > 1000 ? protocol('MESSAGE_TOO_LARGE') : undefined;
    const publisher = new KafkaPublisher({ brokers: ['x:1'] }, sender);
    const small = event('Order', 'a', { s: 'x'.repeat(300) });
    const huge = event('Order', 'b', { s: 'y'.repeat(2000) });
    const afterHuge = event('Order', 'b', { s: 'z' });
    const other = event('Order', 'c', { s: 'x'.repeat(300) });
    const outcomes = await publisher.publish([small, huge, afterHuge, other]);
    expect(outcomes.map((o) => o.status)).toEqual(['ok', 'fatal', 'ok', 'ok']);
    expect(sender.stored.map((s) => s.key)).toEqual(expect.arrayContaining(['a', 'b', 'c']));
  });

  it('after a record error on a group, one by one: an aggregate whose event fails has its later events held back, not sent past it', async () => {
    const sender = new FakeSender({ Order: 1 });
    // The broker fails on the poison record (the large one: an event-scope error, retriable),
    // and so on any group that holds it.
    sender.refuse = (_topic, _partition, bytes) =>
      bytes > 500 ? protocol('UNKNOWN_SERVER_ERROR') : undefined;
    const publisher = new KafkaPublisher({ brokers: ['x:1'] }, sender);
    const before = event('Order', 'a');
    const poison = event('Order', 'b', { s: 'p'.repeat(600) });
    const afterPoison = event('Order', 'b');
    const other = event('Order', 'c');
    const outcomes = await publisher.publish([before, poison, afterPoison, other]);
    expect(outcomes.map((o) => o.status)).toEqual(['ok', 'retriable', 'retriable', 'ok']);
    expect(sender.stored.map((s) => s.key)).toEqual(['a', 'c']);
  });

  it('reports sizes and destinations from one preparation per event', async () => {
    const sender = new FakeSender({ Order: 3 });
    const publisher = new KafkaPublisher({ brokers: ['x:1'] }, sender);
    const e = event('Order', 'k', { a: 1 });
    expect(publisher.sizeOf(e)).toBeGreaterThan(JSON.stringify(e.payload).length);
    await publisher.publish([e]);
    const [topic, partition] = publisher.destinationsOf(e);
    expect(topic).toBe('Order');
    expect(partition).toMatch(/^Order#[0-2]$/);
    expect(sender.stored[0]).toMatchObject({
      topic: 'Order',
      partition: Number(partition.split('#')[1]),
    });
  });
});
