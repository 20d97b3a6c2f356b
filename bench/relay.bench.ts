/* Relay benchmarks (`npm run bench -- relay`). Figures are printed, nothing is asserted.
 * 1. publisher level (Kafka only): KafkaPublisher vs the raw kafkajs producer, same messages,
 *    same batch size, same broker;
 * 2. relay from a pre-filled outbox of 100k events (MongoDB + Kafka) vs the raw producer, with
 *    the peak RSS of the process while the relay drains;
 * 3. end-to-end latency at 200 events/s, commit -> received by a consumer (an upper bound of
 *    commit -> broker ack). */
import { Injectable, Logger, Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  getConnectionToken,
  InjectModel,
  MongooseModule,
  Prop,
  Schema,
  SchemaFactory,
} from '@nestjs/mongoose';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import type { Message } from 'kafkajs';
import { Types } from 'mongoose';
import type { Connection, Model } from 'mongoose';
import { v7 as uuidv7 } from 'uuid';
import { EmitsEvent, OutboxModule, OutboxRelayMetrics } from '../lib';
import type { OutboxEventRecord, RelayOptions } from '../lib';
import { KafkaPublisher, toKafkaMessage } from '../lib/publisher';

interface BenchContext {
  mongoUri?: string;
  mongoKind: 'mongodb' | 'poppydb' | 'none';
  kafkaBrokers: string[];
}

/** Backlog size; `RELAY_BENCH_EVENTS` overrides it (e.g. for a slow stand-in server). */
const EVENTS = Number(process.env.RELAY_BENCH_EVENTS ?? 100_000);
const BATCH = 500;
const AGGREGATES = 1000;

const suffix = (): string => `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

function makeEvent(i: number): OutboxEventRecord {
  return {
    _id: new Types.ObjectId(),
    eventId: uuidv7(),
    eventType: 'OrderPlaced',
    aggregateType: 'Order',
    aggregateId: `agg-${i % AGGREGATES}`,
    payload: { orderId: `o-${i}`, seq: i, total: 42.5, items: [{ sku: 'sku-1', qty: 2 }] },
    occurredAt: new Date(),
    status: 'pending',
    attempts: 0,
  };
}

async function createTopic(kafka: Kafka, topic: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: 6, replicationFactor: 1 }],
    });
  } finally {
    await admin.disconnect();
  }
}

async function rawProducerRate(
  kafka: Kafka,
  topic: string,
  events: OutboxEventRecord[],
): Promise<number> {
  const producer = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  const messages: Message[] = events.map((event) => toKafkaMessage(event));
  const started = process.hrtime.bigint();
  for (let i = 0; i < messages.length; i += BATCH) {
    await producer.sendBatch({
      acks: -1,
      topicMessages: [{ topic, messages: messages.slice(i, i + BATCH) }],
    });
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await producer.disconnect();
  return messages.length / seconds;
}

function line(label: string, value: string): void {
  process.stdout.write(`  ${label.padEnd(58)} ${value}\n`);
}

async function publisherLevel(ctx: BenchContext, kafka: Kafka): Promise<number> {
  const topic = `bench-pub-${suffix()}.Order`;
  await createTopic(kafka, topic);
  const events = Array.from({ length: EVENTS }, (_, i) => makeEvent(i));
  const raw = await rawProducerRate(kafka, topic, events);
  const publisher = new KafkaPublisher({ brokers: ctx.kafkaBrokers, topic: () => topic });
  await publisher.connect();
  const started = process.hrtime.bigint();
  for (let i = 0; i < events.length; i += BATCH) {
    const outcomes = await publisher.publish(events.slice(i, i + BATCH));
    if (outcomes.some((o) => o.status !== 'ok')) throw new Error('publish failed during the bench');
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await publisher.disconnect();
  const rate = events.length / seconds;
  process.stdout.write('publisher level (Kafka only, no MongoDB involved):\n');
  line(`raw kafkajs sendBatch, ${EVENTS} msgs, batch ${BATCH}, acks -1`, `${raw.toFixed(0)} msg/s`);
  line('KafkaPublisher.publish, same messages and batch size', `${rate.toFixed(0)} msg/s`);
  line('ratio KafkaPublisher / raw', (rate / raw).toFixed(2));
  return raw;
}

// ---------------------------------------------------------------- MongoDB-backed parts

@Schema({ collection: 'bench_orders', versionKey: false })
class BenchOrder {
  @Prop({ required: true })
  _id!: string;
  @Prop({ required: true })
  seq!: number;
}
const BenchOrderSchema = SchemaFactory.createForClass(BenchOrder);

@Injectable()
class BenchOrderService {
  constructor(@InjectModel(BenchOrder.name) private readonly orders: Model<BenchOrder>) {}

  @EmitsEvent<BenchOrder>('OrderPlaced', {
    aggregateType: 'Order',
    aggregateId: (order) => `agg-${order.seq % 50}`,
    payload: (order) => ({ orderId: order._id, seq: order.seq }),
  })
  async place(id: string, seq: number): Promise<BenchOrder> {
    const [order] = await this.orders.create([{ _id: id, seq }]);
    return order.toObject();
  }
}

@Module({
  imports: [MongooseModule.forFeature([{ name: BenchOrder.name, schema: BenchOrderSchema }])],
  providers: [BenchOrderService],
})
class BenchOrdersModule {}

function dbUri(ctx: BenchContext, db: string, poolOfOne: boolean): string {
  const url = new URL(ctx.mongoUri as string);
  url.pathname = `/${db}`;
  if (poolOfOne && ctx.mongoKind === 'poppydb') url.searchParams.set('maxPoolSize', '1');
  return url.toString();
}

async function startApp(
  ctx: BenchContext,
  db: string,
  relay: RelayOptions | false,
): Promise<INestApplicationContext> {
  const writer = relay === false;
  const connectionName = writer ? undefined : 'relay';
  return NestFactory.createApplicationContext(
    {
      module: class BenchAppModule {},
      imports: [
        MongooseModule.forRoot(dbUri(ctx, db, writer), connectionName ? { connectionName } : {}),
        OutboxModule.forRoot({ connectionName, relay }),
        ...(writer ? [BenchOrdersModule] : []),
      ],
    } as never,
    { logger: ['error'] },
  );
}

function relayOptions(ctx: BenchContext, prefix: string): RelayOptions {
  return {
    kafka: { brokers: ctx.kafkaBrokers },
    topicPrefix: prefix,
    batchSize: BATCH,
    idleMs: 100,
    sweepGraceMs: 2000,
    sweepIntervalMs: 1000,
  };
}

async function backlogDrain(ctx: BenchContext, kafka: Kafka): Promise<number> {
  // PoppyDB drains a 100k backlog far too slowly to wait for (it is not MongoDB): 5k unless set.
  const events = ctx.mongoKind === 'poppydb' && !process.env.RELAY_BENCH_EVENTS ? 5_000 : EVENTS;
  if (events !== EVENTS) {
    process.stdout.write(
      `  (PoppyDB: backlog of ${events} events; RELAY_BENCH_EVENTS overrides)\n`,
    );
  }
  const db = `bench-relay-${suffix()}`;
  const prefix = `bench-${suffix()}.`;
  await createTopic(kafka, `${prefix}Order`);
  const writer = await startApp(ctx, db, false);
  const connection = writer.get<Connection>(getConnectionToken());
  const outbox = connection.collection('outbox');
  const fillStarted = Date.now();
  for (let i = 0; i < events; i += 5000) {
    const n = Math.min(5000, events - i);
    await outbox.insertMany(Array.from({ length: n }, (_, k) => makeEvent(i + k)) as never[]);
  }
  process.stdout.write(
    `  (outbox pre-filled with ${events} pending events in ${((Date.now() - fillStarted) / 1000).toFixed(1)} s)\n`,
  );
  let peakRss = process.memoryUsage().rss;
  const baseRss = peakRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
  const started = Date.now();
  const relay = await startApp(ctx, db, relayOptions(ctx, prefix));
  while ((await outbox.countDocuments({ status: 'pending' })) > 0)
    await new Promise((r) => setTimeout(r, 200));
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  const published = relay.get(OutboxRelayMetrics).published;
  await relay.close();
  await connection.dropDatabase().catch(() => undefined);
  await writer.close();
  const rate = events / seconds;
  process.stdout.write(`relay draining a pre-filled outbox (${ctx.mongoKind}):\n`);
  line(
    `relay: ${events} pending events -> Kafka acks + marked published`,
    `${rate.toFixed(0)} ev/s (${seconds.toFixed(1)} s, ${published} sends)`,
  );
  line(
    'peak RSS of this process while the relay drained',
    `${(peakRss / 1048576).toFixed(0)} MB (before: ${(baseRss / 1048576).toFixed(0)} MB)`,
  );
  return rate;
}

async function latency(ctx: BenchContext, kafka: Kafka): Promise<void> {
  const db = `bench-lat-${suffix()}`;
  const prefix = `bench-lat-${suffix()}.`;
  const topic = `${prefix}Order`;
  await createTopic(kafka, topic);
  const writer = await startApp(ctx, db, false);
  const relay = await startApp(ctx, db, relayOptions(ctx, prefix));
  const received = new Map<number, number>();
  const consumer = kafka.consumer({ groupId: `bench-${suffix()}`, maxWaitTimeInMs: 20 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const seq = JSON.parse(String(message.value)).seq as number;
      if (!received.has(seq)) received.set(seq, Date.now());
    },
  });
  await new Promise((r) => setTimeout(r, 3000));
  const service = writer.get(BenchOrderService);
  const committed = new Map<number, number>();
  const total = 3000;
  const started = Date.now();
  for (let i = 0; i < total; i++) {
    const due = started + i * 5; // 200 events/s
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await service.place(`l-${i}`, i);
    committed.set(i, Date.now());
  }
  const deadline = Date.now() + 60_000;
  while (received.size < total && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  const rate = total / ((Date.now() - started) / 1000);
  const latencies = [...committed]
    .filter(([seq]) => received.has(seq))
    .map(([seq, at]) => (received.get(seq) as number) - at)
    .sort((a, b) => a - b);
  const pct = (p: number): number =>
    latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
  await consumer.disconnect();
  await relay.close();
  await writer
    .get<Connection>(getConnectionToken())
    .dropDatabase()
    .catch(() => undefined);
  await writer.close();
  process.stdout.write(
    `end-to-end latency at 200 ev/s (${ctx.mongoKind}; commit -> consumer receipt, an upper bound of commit -> ack):\n`,
  );
  line(
    `${latencies.length}/${total} events received (offered ~${Math.min(200, rate).toFixed(0)} ev/s)`,
    `p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${latencies.at(-1)} ms`,
  );
}

export async function runBench(ctx: BenchContext): Promise<void> {
  Logger.overrideLogger(['error']);
  if (ctx.kafkaBrokers.length === 0) {
    process.stdout.write('relay bench skipped: no Kafka broker (KAFKA_BROKERS)\n');
    return;
  }
  const kafka = new Kafka({
    clientId: 'outbox-bench',
    brokers: ctx.kafkaBrokers,
    logLevel: logLevel.NOTHING,
  });
  const mongo = ctx.mongoKind !== 'none' && ctx.mongoUri;
  // The drain runs first, so that its peak RSS is not inflated by the publisher-level part,
  // which holds all its messages in memory.
  const drained = mongo ? await backlogDrain(ctx, kafka) : undefined;
  const raw = await publisherLevel(ctx, kafka);
  if (drained === undefined) {
    process.stdout.write(
      'relay backlog drain, RSS and latency skipped: no MongoDB replica set in this run\n',
    );
    return;
  }
  line('ratio relay drain / raw kafkajs producer (same batch size)', (drained / raw).toFixed(2));
  await latency(ctx, kafka);
}
