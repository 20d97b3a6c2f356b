import { randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { getConnectionToken } from '@nestjs/mongoose';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { Kafka, type IHeaders, type Message } from 'kafkajs';
import type { Connection } from 'mongoose';
import request from 'supertest';
import { appConfig, orderTopic } from '../src/app.config.js';
import { AppModule } from '../src/app.module.js';
import { connectOrderEvents } from '../src/app.setup.js';

async function eventually<T>(what: string, probe: () => Promise<T | null | undefined>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The first message of `topic` whose key is `key`, read with a consumer group of its own. */
async function readMessage(kafka: Kafka, topic: string, key: string): Promise<Message> {
  const consumer = kafka.consumer({ groupId: `compat-reader-${randomUUID()}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    return await new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no message ${key} on ${topic}`)), 60_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          if (message.key?.toString() !== key) return;
          clearTimeout(timer);
          const headers: IHeaders = {};
          for (const [name, value] of Object.entries(message.headers ?? {})) {
            headers[name] = Buffer.isBuffer(value) ? value.toString() : value;
          }
          resolve({ key: message.key, value: message.value, headers });
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
}

describe('the outbox in this app (installed from the packed tarball)', () => {
  const run = randomUUID().slice(0, 8);
  process.env.APP_DB_NAME = `compat_${run}`;
  process.env.APP_TOPIC_PREFIX = `compat-${run}.`;
  process.env.APP_CONSUMER_GROUP = `compat-${run}`;
  const config = appConfig();
  const kafka = new Kafka({ clientId: 'compat-test', brokers: config.kafkaBrokers, logLevel: 1 });
  let app: INestApplication;
  let db: Connection;

  beforeAll(async () => {
    const admin = kafka.admin();
    await admin.connect();
    // One partition: a message read after another was delivered after it, to every consumer.
    await admin.createTopics({
      topics: [{ topic: orderTopic(config), numPartitions: 1 }],
      waitForLeaders: true,
    });
    await admin.disconnect();

    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication();
    connectOrderEvents(app, config);
    await app.startAllMicroservices();
    await app.init();
    db = app.get<Connection>(getConnectionToken());
  }, 120_000);

  afterAll(async () => {
    await db?.dropDatabase().catch(() => undefined);
    await app?.close(); // the Kafka consumer leaves its group: seconds, not milliseconds
  }, 60_000);

  it('commits an order with its event, the relay publishes it to Kafka, the handler applies it once', async () => {
    const placed = await request(app.getHttpServer())
      .post('/orders')
      .send({ customerId: 'ada', total: 25 })
      .expect(201);
    const orderId = (placed.body as { _id: string })._id;

    // Committed together: the order and its outbox event.
    expect(await db.collection<{ _id: string }>('orders').countDocuments({ _id: orderId })).toBe(1);
    const event = await db.collection('outbox').findOne({ aggregateId: orderId });
    expect(event).toMatchObject({ eventType: 'OrderPlaced', aggregateType: 'Order' });

    // Published by the relay: marked in the outbox, and on the topic with the envelope headers.
    await eventually('the event marked published', () =>
      db.collection('outbox').findOne({ aggregateId: orderId, status: 'published' }),
    );
    const message = await readMessage(kafka, orderTopic(config), orderId);
    expect(message.headers).toMatchObject({ ce_id: event!.eventId, ce_type: 'OrderPlaced' });

    // Applied by the @IdempotentHandler.
    const summaries = db.collection('ordersummaries');
    await eventually('the summary', () => summaries.findOne({ orderId }));

    // Delivered again (as after a relay crash), then a later order on the same partition: once
    // the later one is applied, the duplicate was consumed before it, and skipped.
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: orderTopic(config), messages: [message] });
    await producer.disconnect();
    const later = await request(app.getHttpServer())
      .post('/orders')
      .send({ customerId: 'bob', total: 7 })
      .expect(201);
    const laterId = (later.body as { _id: string })._id;
    await eventually('the later summary', () => summaries.findOne({ orderId: laterId }));

    expect(await summaries.findOne({ orderId })).toMatchObject({
      customerId: 'ada',
      total: 25,
      appliedEvents: 1,
    });
    expect(
      await db
        .collection('outbox_processed_events')
        .countDocuments({ consumer: 'order-summaries' }),
    ).toBe(2);
  }, 180_000);

  it("registers the relay's periodic jobs in the SchedulerRegistry", async () => {
    const registry = app.get(SchedulerRegistry);
    await eventually('the relay jobs', async () => registry.getIntervals().length >= 3 || null);
    expect(registry.getIntervals().sort()).toEqual([
      'nestjs-outbox:relay:default:checkpoint',
      'nestjs-outbox:relay:default:lease',
      'nestjs-outbox:relay:default:sweep',
    ]);
  });
});
