import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import request from 'supertest';
import { loadConfig } from '../../sample-app/config';
import { RunningSample, startSample } from '../../sample-app/sample.app';
import { describeWith, mongoUriFor, readTopic, testServers, uniqueName } from '../harness';

async function eventually<T>(
  what: string,
  probe: () => Promise<T | null | undefined>,
  timeoutMs = 30000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The sample end to end: HTTP -> outbox -> relay -> Kafka -> @IdempotentHandler -> read model. */
describeWith(['mongodb', 'kafka'], 'sample app', () => {
  let sample: RunningSample;
  let db: Connection;

  beforeAll(async () => {
    const config = loadConfig({
      MONGODB_URI: mongoUriFor(uniqueName('sample')),
      KAFKA_BROKERS: testServers().kafkaBrokers.join(','),
      PORT: '0',
      SAMPLE_CONSUMER_GROUP: uniqueName('summaries'),
    });
    sample = await startSample(config, false);
    db = sample.app.get<Connection>(getConnectionToken());
  });
  afterAll(async () => {
    await db?.dropDatabase().catch(() => undefined);
    await sample?.close();
  });

  it('an order placed and cancelled over HTTP reaches Kafka and the read model, each event applied once', async () => {
    // The sample's topics are fixed: a customer of its own keeps earlier runs' events on a shared
    // broker out of this run's counts.
    const carol = uniqueName('carol');
    const placed = await request(sample.url!)
      .post('/orders')
      .send({ customerId: carol, items: [{ sku: 'BOOK-1', quantity: 2, unitPrice: 10 }] })
      .expect(201);
    const orderId: string = placed.body.id;
    expect(placed.body).toMatchObject({ customerId: carol, total: 20, status: 'placed' });

    const summaries = db.collection('order_summaries');
    await eventually('OrderCreated applied', () =>
      summaries.findOne({ orderId, status: 'placed' }),
    );

    await request(sample.url!)
      .post(`/orders/${orderId}/cancel`)
      .send({ reason: 'test' })
      .expect(200);
    const summary = await eventually('OrderCancelled applied', () =>
      summaries.findOne({ orderId, status: 'cancelled' }),
    );
    expect(summary).toMatchObject({
      customerId: carol,
      total: 20,
      itemCount: 2,
      appliedEvents: 2,
      cancelReason: 'test',
    });
    expect(await db.collection('customer_stats').findOne({ customerId: carol })).toMatchObject({
      ordersPlaced: 1,
      ordersCancelled: 1,
    });

    const records = (await readTopic('Order', { count: 100, timeoutMs: 5000 })).filter(
      (r) => r.key === orderId,
    );
    expect(records.map((r) => r.headers.ce_type)).toEqual(['OrderCreated', 'OrderCancelled']);
    expect(records.map((r) => r.headers.ce_sequence)).toEqual(['1', '2']);
    expect(JSON.parse(records[0].value!)).toEqual({
      orderId,
      customerId: carol,
      total: 20,
      itemCount: 2,
    });
    const outbox = await db.collection('outbox').find({ aggregateId: orderId }).toArray();
    expect(records.map((r) => r.headers.ce_id).sort()).toEqual(outbox.map((e) => e.eventId).sort());
  });

  describe('bad HTTP input gets a 4xx with a clear message and writes nothing', () => {
    const cases: Array<[string, () => request.Test, number, RegExp]> = [
      [
        'missing items',
        () => request(sample.url!).post('/orders').send({ customerId: 'x' }),
        400,
        /items/,
      ],
      [
        'wrong types',
        () =>
          request(sample.url!)
            .post('/orders')
            .send({ customerId: 7, items: [{ sku: 'A', quantity: 'two', unitPrice: 1 }] }),
        400,
        /customerId|quantity/,
      ],
      [
        'unknown field',
        () =>
          request(sample.url!)
            .post('/orders')
            .send({
              customerId: 'x',
              items: [{ sku: 'A', quantity: 1, unitPrice: 1 }],
              admin: true,
            }),
        400,
        /admin should not exist/,
      ],
      [
        'unknown order id',
        () => request(sample.url!).post('/orders/65a000000000000000000000/cancel').send({}),
        404,
        /not found/,
      ],
      [
        'malformed order id',
        () => request(sample.url!).post('/orders/not-an-id/cancel').send({}),
        404,
        /not found/,
      ],
    ];

    it.each(cases)('%s', async (_name, send, status, message) => {
      const before = {
        orders: await db.collection('orders').countDocuments(),
        events: await db.collection('outbox').countDocuments(),
      };
      const response = await send().expect(status);
      expect(JSON.stringify(response.body.message)).toMatch(message);
      expect(await db.collection('orders').countDocuments()).toBe(before.orders);
      expect(await db.collection('outbox').countDocuments()).toBe(before.events);
    });

    it('cancelling twice is a 409 and emits no second event', async () => {
      const { body } = await request(sample.url!)
        .post('/orders')
        .send({ customerId: 'dave', items: [{ sku: 'MUG-1', quantity: 1, unitPrice: 5 }] })
        .expect(201);
      await request(sample.url!).post(`/orders/${body.id}/cancel`).send({}).expect(200);
      const events = await db.collection('outbox').countDocuments({ aggregateId: body.id });
      const second = await request(sample.url!)
        .post(`/orders/${body.id}/cancel`)
        .send({})
        .expect(409);
      expect(second.body.message).toMatch(/already cancelled/);
      expect(await db.collection('outbox').countDocuments({ aggregateId: body.id })).toBe(events);
    });
  });
});
