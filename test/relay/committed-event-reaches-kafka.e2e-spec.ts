import { Logger } from '@nestjs/common';
import { createTopics, describeWith, readTopic, uniqueName } from '../harness';
import { startRelayApp, testLogLevels, testRelayOptions, waitFor } from './support/relay-app';
import type { RelayTestApp } from './support/relay-app';

jest.setTimeout(180_000);

describeWith(
  ['mongodb', 'kafka'],
  'a committed @Transactional + @EmitsEvent call reaches Kafka through the relay',
  () => {
    let writer: RelayTestApp;
    let relay: RelayTestApp;
    let prefix: string;

    beforeAll(async () => {
      Logger.overrideLogger(testLogLevels());
      const db = uniqueName('relay-e2e');
      prefix = `${uniqueName('e2e')}.`;
      await createTopics([`${prefix}Order`]);
      writer = await startRelayApp(db, false);
      relay = await startRelayApp(db, testRelayOptions(prefix));
    });
    afterAll(async () => {
      await relay?.close();
      await writer?.connection.dropDatabase().catch(() => undefined);
      await writer?.close();
    });

    it('produces exactly the expected message and marks the event published', async () => {
      await writer.orders.place('ord-1', 'agg-1', 1);
      const [stored] = await writer.connection.collection('outbox').find({}).toArray();
      const [record] = await readTopic(`${prefix}Order`, { count: 1, timeoutMs: 30_000 });
      expect(record).toMatchObject({
        topic: `${prefix}Order`,
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
          (await writer.connection.collection('outbox').findOne({ eventId: stored.eventId }))
            ?.status === 'published',
        10_000,
        'the event to be marked published',
      );
      const published = await writer.connection
        .collection('outbox')
        .findOne({ eventId: stored.eventId });
      expect(published?.publishedAt).toBeInstanceOf(Date);
      expect(relay.metrics?.published).toBeGreaterThanOrEqual(1);
      expect(relay.relay?.isLeader).toBe(true);
    });

    it('creates the relay indexes, including the retention TTL on publishedAt', async () => {
      const indexes = await writer.connection.collection('outbox').indexes();
      const ttl = indexes.find((index) => index.name === 'outbox_relay_retention');
      expect(ttl?.expireAfterSeconds).toBe(7 * 24 * 3600);
      expect(indexes.map((index) => index.name)).toEqual(
        expect.arrayContaining(['outbox_relay_pending', 'outbox_relay_aggregate_order']),
      );
    });
  },
);
