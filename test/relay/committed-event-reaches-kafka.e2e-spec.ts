import { describeWith, readTopic } from '../harness';
import { relayTestBed, waitFor } from './support/relay-app';
import type { RelayTestApp } from './support/relay-app';

jest.setTimeout(180_000);

describeWith(
  ['mongodb', 'kafka'],
  'a committed @Transactional + @EmitsEvent call reaches Kafka through the relay',
  () => {
    const bed = relayTestBed('e2e');
    let relay: RelayTestApp;

    beforeAll(async () => {
      relay = await bed.startRelay();
    });

    it('produces exactly the expected message and marks the event published', async () => {
      await bed.writer.orders.place('ord-1', 'agg-1', 1);
      const [stored] = await bed.writer.connection.collection('outbox').find({}).toArray();
      const [record] = await readTopic(bed.topic, { count: 1, timeoutMs: 30_000 });
      expect(record).toMatchObject({
        topic: bed.topic,
        key: 'agg-1',
        value: JSON.stringify({ orderId: 'ord-1', seq: 1 }),
        headers: {
          ce_specversion: '1.0',
          ce_id: stored.eventId,
          ce_type: 'OrderPlaced',
          ce_source: 'Order',
          ce_subject: 'agg-1',
          ce_time: (stored.occurredAt as Date).toISOString(),
          'content-type': 'application/json',
          traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        },
      });
      await waitFor(
        async () =>
          (await bed.writer.connection.collection('outbox').findOne({ eventId: stored.eventId }))
            ?.status === 'published',
        10_000,
        'the event to be marked published',
      );
      const published = await bed.writer.connection
        .collection('outbox')
        .findOne({ eventId: stored.eventId });
      expect(published?.publishedAt).toBeInstanceOf(Date);
      expect(relay.metrics?.published).toBeGreaterThanOrEqual(1);
      expect(relay.relay?.isLeader).toBe(true);
    });

    it('creates the relay indexes, including the retention TTL on publishedAt', async () => {
      const indexes = await bed.writer.connection.collection('outbox').indexes();
      const ttl = indexes.find((index) => index.name === 'outbox_relay_retention');
      expect(ttl?.expireAfterSeconds).toBe(7 * 24 * 3600);
      expect(indexes.map((index) => index.name)).toEqual(
        expect.arrayContaining(['outbox_relay_status_due', 'outbox_relay_aggregate_order']),
      );
    });
  },
);
