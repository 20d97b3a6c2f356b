import type { OutboxEventRecord, OutboxPublisher, PublishOutcome } from '../../lib';
import { KafkaPublisher } from '../../lib/publisher/kafka/kafka.publisher';
import { describeWith, readTopic, testServers } from '../harness';
import { relayTestBed, testRelayOptions, waitFor } from './support/relay-app';
import type { RelayTestApp } from './support/relay-app';

jest.setTimeout(180_000);

/** The real Kafka publisher, except that aggregate `poison` always fails (retriably). */
class PoisonPublisher implements OutboxPublisher {
  constructor(private readonly inner: KafkaPublisher) {}
  connect(): Promise<void> {
    return this.inner.connect();
  }
  async publish(events: readonly OutboxEventRecord[]): Promise<PublishOutcome[]> {
    const healthy = events.filter((e) => e.aggregateId !== 'poison');
    const results = await this.inner.publish(healthy);
    return events.map((e) =>
      e.aggregateId === 'poison'
        ? { status: 'retriable', error: new Error('consumer contract violated (simulated)') }
        : (results[healthy.indexOf(e)] as PublishOutcome),
    );
  }
  disconnect(): Promise<void> {
    return this.inner.disconnect();
  }
}

describeWith(
  ['mongodb', 'kafka'],
  'a poison event goes to the dead-letter collection while others flow',
  () => {
    const bed = relayTestBed('poison');
    let relay: RelayTestApp;

    beforeAll(async () => {
      const publisher = new PoisonPublisher(
        new KafkaPublisher({ brokers: testServers().kafkaBrokers, topicPrefix: bed.prefix }),
      );
      relay = await bed.startRelay(
        testRelayOptions(bed.prefix, {
          kafka: undefined,
          publisher,
          maxAttempts: 4,
          backoff: { initialMs: 200, maxMs: 400, jitter: 0 },
        }),
      );
    });

    it('retries maxAttempts times with backoff, dead-letters it with its error history, then its aggregate continues', async () => {
      await bed.writer.orders.place('p-1', 'poison', 1);
      await bed.writer.orders.place('p-2', 'poison', 2);
      for (let i = 0; i < 30; i++) await bed.writer.orders.place(`h-${i}`, `healthy-${i % 3}`, i);
      const healthy = await readTopic(bed.topic, { count: 30, timeoutMs: 20_000 });
      expect(healthy).toHaveLength(30);
      const deadLetters = bed.writer.connection.collection('outbox_dead_letters');
      await waitFor(
        async () => (await deadLetters.countDocuments()) >= 2,
        30_000,
        'two dead letters',
      );
      const first = await deadLetters.findOne({ 'payload.orderId': 'p-1' });
      expect(first).toMatchObject({ reason: 'max-attempts', attempts: 4, aggregateId: 'poison' });
      expect(first?.errors).toHaveLength(4);
      expect(first?.lastError).toContain('consumer contract violated');
      expect(
        await bed.writer.connection.collection('outbox').countDocuments({ aggregateId: 'poison' }),
      ).toBe(0);
      expect(relay.metrics?.deadLettered).toBe(2);
      const second = await deadLetters.findOne({ 'payload.orderId': 'p-2' });
      // Each poison event: attempts 1..4 recorded once each, the 4th dead-letters it.
      for (const dead of [first, second]) {
        expect((dead?.errors as Array<{ attempt: number }>).map((e) => e.attempt)).toEqual([
          1, 2, 3, 4,
        ]);
      }
      expect(relay.metrics?.retried).toBeGreaterThanOrEqual(6);
    });
  },
);
