import { Controller, INestMicroservice, Logger, Module } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { getConnectionToken, InjectModel, MongooseModule } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import { Schema } from 'mongoose';
import type { Connection, Model } from 'mongoose';
import { IdempotentHandler, OutboxKafkaServer, OutboxModule } from '../../lib';
import {
  createTopics,
  describeWith,
  mongoUriFor,
  readTopic,
  testKafka,
  testServers,
  uniqueName,
} from '../harness';
import {
  startRelayApp,
  testLogLevels,
  testRelayOptions,
  waitFor,
} from '../relay/support/relay-app';
import type { RelayTestApp } from '../relay/support/relay-app';

/**
 * The whole chain with forced duplicates: a service emits, the relay publishes, the idempotent
 * handler applies. Then the crash window "published but not yet marked" is reproduced (every
 * event set back to pending, checkpoint removed) and a new relay publishes everything again:
 * Kafka carries each event twice, the handler still applies each once.
 */
describeWith(['mongodb', 'kafka'], 'relay duplicates reach an idempotent handler', () => {
  const topicPrefix = `${uniqueName('e2e')}.`;
  const topic = `${topicPrefix}Order`;
  const groupId = uniqueName('applier');
  const db = uniqueName('relay-dupes');
  let writer: RelayTestApp;
  let consumer: INestMicroservice;
  let consumerDb: Connection;

  @Controller()
  class Applier {
    constructor(
      @InjectModel('Applied', 'consumer')
      private readonly applied: Model<{ _id: string; count: number }>,
    ) {}

    @EventPattern('OrderPlaced')
    @IdempotentHandler({ consumer: 'e2e-applier', connectionName: 'consumer' })
    async apply(@Payload() event: { orderId: string; seq: number }, @Ctx() _ctx: KafkaContext) {
      // A Mongoose model call: it joins the handler's transaction by itself.
      await this.applied.updateOne(
        { _id: event.orderId },
        { $inc: { count: 1 } },
        { upsert: true },
      );
    }
  }

  @Module({
    imports: [
      // Resolved when the app is built (beforeAll), not when this file is collected.
      MongooseModule.forRootAsync({
        connectionName: 'consumer',
        useFactory: () => ({ uri: mongoUriFor(db) }),
      }),
      MongooseModule.forFeature(
        [
          {
            name: 'Applied',
            schema: new Schema({ _id: String, count: Number }, { collection: 'applied' }),
          },
        ],
        'consumer',
      ),
      OutboxModule.forRoot({ connectionName: 'consumer', relay: false }),
    ],
    controllers: [Applier],
  })
  class ConsumerModule {}

  async function consumedOffsets(): Promise<number> {
    const admin = testKafka('offsets').admin();
    await admin.connect();
    try {
      const [entry] = await admin.fetchOffsets({ groupId: `${groupId}-server`, topics: [topic] });
      return (entry?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
    } finally {
      await admin.disconnect();
    }
  }

  beforeAll(async () => {
    Logger.overrideLogger(testLogLevels());
    await createTopics([topic]);
    writer = await startRelayApp(db, false);
    const moduleRef = await Test.createTestingModule({ imports: [ConsumerModule] }).compile();
    consumer = moduleRef.createNestMicroservice({
      strategy: new OutboxKafkaServer({
        client: { clientId: 'e2e-applier', brokers: testServers().kafkaBrokers },
        consumer: { groupId },
        subscribe: { fromBeginning: true },
        topics: [topic],
      }),
      logger: testLogLevels(),
    });
    await consumer.listen();
    consumerDb = consumer.get<Connection>(getConnectionToken('consumer'));
  });
  afterAll(async () => {
    await consumer?.close();
    await writer?.connection.dropDatabase().catch(() => undefined);
    await writer?.close();
  });

  it('every event is on Kafka twice and applied once', async () => {
    const total = 20;
    for (let i = 0; i < total; i++) await writer.orders.place(`o-${i}`, `agg-${i % 4}`, i);

    let relay = await startRelayApp(db, testRelayOptions(topicPrefix));
    const outbox = writer.connection.collection('outbox');
    await waitFor(
      async () => (await outbox.countDocuments({ status: 'pending' })) === 0,
      60_000,
      'first publication',
    );
    await waitFor(async () => (await consumedOffsets()) === total, 60_000, 'first consumption');
    await relay.close();

    // The crash window: published, but neither marked nor checkpointed.
    await outbox.updateMany({}, { $set: { status: 'pending' }, $unset: { publishedAt: '' } });
    await writer.connection.collection('outbox_relay_state').deleteMany({});
    relay = await startRelayApp(db, testRelayOptions(topicPrefix));
    try {
      await waitFor(
        async () => (await consumedOffsets()) === 2 * total,
        90_000,
        'the duplicates consumed',
      );
    } finally {
      await relay.close();
    }

    const records = await readTopic(topic, { count: 2 * total, timeoutMs: 30_000 });
    const perEvent = new Map<string, number>();
    for (const r of records)
      perEvent.set(r.headers.ce_id, (perEvent.get(r.headers.ce_id) ?? 0) + 1);
    expect(perEvent.size).toBe(total);
    expect([...perEvent.values()].every((n) => n === 2)).toBe(true);

    const applied = await consumerDb.collection('applied').find().toArray();
    expect(applied).toHaveLength(total);
    expect(applied.every((doc) => doc.count === 1)).toBe(true);
    expect(
      await consumerDb
        .collection('outbox_processed_events')
        .countDocuments({ consumer: 'e2e-applier' }),
    ).toBe(total);
  });
});
