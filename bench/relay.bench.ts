/* Relay benchmarks (`npm run bench -- relay`). Figures are printed; no timing is asserted, but
 * a lost, duplicated or still pending event fails the part.
 * 1. publisher level (Kafka only): the raw kafkajs and @platformatic/kafka producers, then
 *    KafkaPublisher with each client (`relay.kafka.client`), same messages, same batch size,
 *    same broker; then the relay core (RelayEngine + KafkaPublisher, no database) with each
 *    client on the same messages, in alternating rounds with the raw producers (each round:
 *    raw kafkajs, raw @platformatic/kafka, raw kafkajs building its messages in its clock as
 *    the relay does, relay core with each; `RELAY_BENCH_ROUNDS`, default 3), as ratios of the
 *    medians to raw kafkajs and to the client's own raw producer.
 *    @platformatic/kafka is skipped, with the reason, where it cannot run;
 * 2. the relay, in its own process, draining a pre-filled outbox of 30k and 100k events
 *    (MongoDB + Kafka) vs the raw producer, with that process's memory (relay-drain.bench.ts);
 *    what one held event costs in memory (relay-event-memory.bench.ts, no server);
 * 3. end-to-end latency at 200 events/s, commit -> received by a consumer (an upper bound of
 *    commit -> broker ack).
 * Under `--smoke` every size is small (2 000 events, 200 for the latency).
 * `RELAY_BENCH_PARTS=publisher,core` runs only the parts named (after `relay/`). */
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Module } from '@nestjs/common';
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
import { Partitioners } from 'kafkajs';
import type { Kafka } from 'kafkajs';
import type { Message } from 'kafkajs';
import type { Connection, Model } from 'mongoose';
import { EmitsEvent, OutboxModule } from '../lib';
import { RELAY_DEFAULTS } from '../lib/relay/relay.options';
import type { OutboxEventRecord, RelayOptions } from '../lib';
import type {
  MarkedDead,
  OutboxRelayStore,
  StaleEvent,
} from '../lib/relay/ports/outbox-relay.store';
import { relayCore as relayCoreOver } from '../test/relay/support/relay-core';
import { KafkaPublisher, toKafkaMessage } from '../lib/publisher';
import type { KafkaClientName, KafkaSender } from '../lib/publisher/kafka/kafka.sender';
import { loadPlatformaticKafka } from '../lib/publisher/platformatic/platformatic-kafka.loader';
import { HEAP_BOUNDED, backlogDrain, drainSizes } from './relay-drain.bench';
import { handOverPause, partitionedDrain } from './relay-partitions.bench';
import { check, line, sized } from './bench-part';
import { diagnosticsPart } from './relay-diagnostics.bench';
import { eventMemoryPart } from './relay-event-memory.bench';
import {
  benchKafka,
  createTopic,
  dbUri,
  makeEvent,
  suffix,
  topicSize,
} from './support/bench-outbox';
import { formatTimed, timed } from './support/timed';
import type { Timed } from './support/timed';
import type { BenchContext, BenchPart } from './bench-part';

/** Backlog size; `RELAY_BENCH_EVENTS` overrides it (e.g. for a slow stand-in server). */
const eventCount = (ctx: BenchContext): number => sized(ctx, 'RELAY_BENCH_EVENTS', 100_000, 2_000);
const BATCH = 500;

/**
 * The raw kafkajs producer's rate and CPU. Its messages are built before the clock starts, unless
 * `buildInClock` (then each batch's messages are built right before it is sent, as the relay
 * builds its own inside its clock): both views are printed by the relay/core part.
 */
async function rawProducerRate(
  kafka: Kafka,
  topic: string,
  events: OutboxEventRecord[],
  buildInClock = false,
): Promise<Timed> {
  const producer = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  const built: Message[] | undefined = buildInClock
    ? undefined
    : events.map((event) => toKafkaMessage(event));
  const measured = await timed(events.length, async () => {
    for (let i = 0; i < events.length; i += BATCH) {
      const messages = built
        ? built.slice(i, i + BATCH)
        : events.slice(i, i + BATCH).map((event) => toKafkaMessage(event));
      await producer.sendBatch({ acks: -1, topicMessages: [{ topic, messages }] });
    }
  });
  await producer.disconnect();
  return measured;
}

/** The raw `@platformatic/kafka` producer on the same messages, batches and acks as kafkajs'. */
async function rawPlatformaticRate(
  ctx: BenchContext,
  topic: string,
  events: OutboxEventRecord[],
): Promise<Timed> {
  const { Producer, stringSerializers } = loadPlatformaticKafka();
  const producer = new Producer<string, string, string, string>({
    clientId: 'outbox-bench',
    bootstrapBrokers: ctx.kafkaBrokers,
    serializers: stringSerializers,
    autocreateTopics: false,
  });
  // Connects and reads the topic, as kafkajs' connect() does before its clock starts.
  await producer.metadata({ topics: [topic] });
  const messages = events.map((event) => ({ topic, ...toKafkaMessage(event) }));
  const measured = await timed(messages.length, async () => {
    for (let i = 0; i < messages.length; i += BATCH) {
      await producer.send({ acks: -1, messages: messages.slice(i, i + BATCH) });
    }
  });
  await producer.close();
  return measured;
}

const CLIENT_LABEL: Record<KafkaClientName, string> = {
  kafkajs: 'kafkajs',
  platformatic: '@platformatic/kafka',
};

/** The clients this run measures: kafkajs, and @platformatic/kafka when it can run here. */
function benchClients(): KafkaClientName[] {
  try {
    loadPlatformaticKafka();
    return ['kafkajs', 'platformatic'];
  } catch (error) {
    line('@platformatic/kafka', `skipped: ${(error as Error).message}`);
    return ['kafkajs'];
  }
}

/** The raw producers' rates of this run (the publisher part), for the ratios of later parts. */
const rawRates: Partial<Record<KafkaClientName, number>> = {};

async function publisherLevel(ctx: BenchContext, kafka: Kafka): Promise<void> {
  const clients = benchClients();
  const topic = `bench-pub-${suffix()}.Order`;
  await createTopic(kafka, topic);
  const events = Array.from({ length: eventCount(ctx) }, (_, i) => makeEvent(i));
  const rawKafkajs = await rawProducerRate(kafka, topic, events);
  const rawPlatformatic = clients.includes('platformatic')
    ? await rawPlatformaticRate(ctx, topic, events)
    : undefined;
  rawRates.kafkajs = rawKafkajs.rate;
  rawRates.platformatic = rawPlatformatic?.rate;
  const runs: Partial<Record<KafkaClientName, Timed>> = {};
  for (const client of clients) {
    const publisher = new KafkaPublisher({
      brokers: ctx.kafkaBrokers,
      client,
      topic: () => topic,
    });
    await publisher.connect();
    runs[client] = await timed(events.length, async () => {
      for (let i = 0; i < events.length; i += BATCH) {
        const outcomes = await publisher.publish(events.slice(i, i + BATCH));
        if (outcomes.some((o) => o.status !== 'ok')) {
          throw new Error(`publish with ${client} failed during the bench`);
        }
      }
    });
    await publisher.disconnect();
  }
  // Every producer wrote every event once into the same topic.
  const sent = 2 * clients.length * events.length;
  const inKafka = await topicSize(kafka, topic);
  const raw = rawKafkajs.rate;
  process.stdout.write('publisher level (Kafka only, no MongoDB involved):\n');
  line(
    `raw kafkajs sendBatch, ${events.length} msgs, batch ${BATCH}, acks -1`,
    formatTimed([rawKafkajs]),
  );
  if (rawPlatformatic) {
    line(
      'raw @platformatic/kafka send, same messages and batch size',
      formatTimed([rawPlatformatic]),
    );
    line('ratio raw @platformatic/kafka / raw kafkajs', (rawPlatformatic.rate / raw).toFixed(2));
  }
  for (const client of clients) {
    const run = runs[client] as Timed;
    line(`KafkaPublisher with ${CLIENT_LABEL[client]}, same messages`, formatTimed([run]));
    line(
      `ratio KafkaPublisher (${CLIENT_LABEL[client]}) / raw kafkajs`,
      (run.rate / raw).toFixed(2),
    );
  }
  line('messages in Kafka / sent by all', `${inKafka} / ${sent}`);
  check(inKafka >= sent, `${sent - inKafka} messages lost`);
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

/** A store that hands nothing out and keeps only what was marked: the relay core without a database. */
class MarkOnlyStore implements OutboxRelayStore {
  marked = 0;
  findPendingState = async (): Promise<[]> => [];
  findPendingOfAggregates = async (): Promise<OutboxEventRecord[]> => [];
  findPendingPage = async (): Promise<OutboxEventRecord[]> => [];
  findRetryingAggregates = async (): Promise<[]> => [];
  findStaleEvents = async (): Promise<StaleEvent[]> => [];
  findMarkedDead = async (): Promise<MarkedDead[]> => [];
  pendingStats = async (): Promise<{ count: number }> => ({ count: 0 });
  serverTime = async (): Promise<Date> => new Date();
  majorityTime = async (): Promise<Date> => new Date();
  majorityWriteTime = async (): Promise<Date> => new Date();
  findDueAggregates = async (): Promise<[]> => [];
  nextDueAt = async (): Promise<undefined> => undefined;
  scheduledStats = async (): Promise<{ count: number }> => ({ count: 0 });
  markPublished = async (ids: readonly unknown[]): Promise<void> => {
    this.marked += ids.length;
  };
  markHeld = async (): Promise<void> => undefined;
  recordFailure = async (): Promise<void> => undefined;
  markDead = async (): Promise<void> => undefined;
  copyToDeadLetters = async (): Promise<void> => undefined;
  removeDead = async (): Promise<void> => undefined;
}

/** A sender that acknowledges each send on the next turn and stores nothing (no client, no I/O). */
const storesNothing: KafkaSender = {
  connect: async () => undefined,
  disconnect: async () => undefined,
  replaceProducer: async () => undefined,
  partitionCount: async () => 6,
  send: () => new Promise((resolve) => setImmediate(resolve)),
};

/**
 * RelayEngine (lanes, batching, bookkeeping) + KafkaPublisher, no MongoDB: the relay's own cost,
 * in events per second and CPU per event over `events` (a fresh topic). With client `none`, its
 * publisher's sender stores nothing: the CPU is then the relay's alone. Also the core of
 * relay/diagnostics.
 */
export async function relayCore(
  ctx: BenchContext,
  kafka: Kafka,
  client: KafkaClientName | 'none',
  events = Array.from({ length: eventCount(ctx) }, (_, i) => makeEvent(i)),
): Promise<Timed> {
  const topic = `bench-core-${suffix()}.Order`;
  const options = { brokers: ctx.kafkaBrokers, topic: () => topic };
  if (client !== 'none') await createTopic(kafka, topic);
  const publisher =
    client === 'none'
      ? new KafkaPublisher(options, storesNothing)
      : new KafkaPublisher({ ...options, client });
  await publisher.connect();
  const store = new MarkOnlyStore();
  const { engine, offer } = relayCoreOver(store, publisher, {
    batchSize: BATCH,
    maxInFlight: RELAY_DEFAULTS.maxInFlight,
  });
  const measured = await timed(events.length, async () => {
    await offer(events);
    await engine.idle();
  });
  await engine.close(1000);
  await publisher.disconnect();
  check(
    store.marked === events.length,
    `relay core marked ${store.marked} of ${events.length} events`,
  );
  if (client === 'none') return measured;
  const inKafka = await topicSize(kafka, topic);
  check(inKafka >= events.length, `${events.length - inKafka} events never reached Kafka`);
  return measured;
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
  await sleep(ctx.smoke ? 1000 : 3000);
  const service = writer.get(BenchOrderService);
  const committed = new Map<number, number>();
  const total = sized(ctx, 'RELAY_BENCH_LATENCY_EVENTS', 3000, 200);
  const started = Date.now();
  for (let i = 0; i < total; i++) {
    const due = started + i * 5; // 200 events/s
    const wait = due - Date.now();
    if (wait > 0) await sleep(wait);
    await service.place(`l-${i}`, i);
    committed.set(i, Date.now());
  }
  const deadline = Date.now() + 60_000;
  while (received.size < total && Date.now() < deadline) await sleep(100);
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
  check(latencies.length === total, `${total - latencies.length} events not received in 60 s`);
}

/**
 * A relay taking over with many aggregates waiting for a retry holds each of them until it is
 * due, before it follows the stream: the engine's part of that start-up, without a database.
 */
async function startUpWithRetryingAggregates(count: number): Promise<number> {
  const store = new MarkOnlyStore();
  const publisher = {
    connect: async () => undefined,
    disconnect: async () => undefined,
    publish: async () => [],
  };
  const { engine } = relayCoreOver(store, publisher, {
    batchSize: BATCH,
    maxInFlight: RELAY_DEFAULTS.maxInFlight,
  });
  const retryAt = new Date(Date.now() + 3_600_000);
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    engine.holdUntil(
      { aggregateType: 'Order', aggregateId: `retrying-${i}` },
      new Date(retryAt.getTime() + (i % 997)),
    );
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  await engine.close(100);
  return ms;
}

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** One raw producer's rate and CPU on fresh events in a fresh topic (messages built before the clock starts). */
async function rawRate(
  ctx: BenchContext,
  kafka: Kafka,
  client: KafkaClientName,
  buildInClock = false,
): Promise<Timed> {
  const topic = `bench-raw-${suffix()}.Order`;
  await createTopic(kafka, topic);
  const events = Array.from({ length: eventCount(ctx) }, (_, i) => makeEvent(i));
  const measured =
    client === 'kafkajs'
      ? await rawProducerRate(kafka, topic, events, buildInClock)
      : await rawPlatformaticRate(ctx, topic, events);
  const inKafka = await topicSize(kafka, topic);
  check(inKafka >= events.length, `raw ${client}: ${events.length - inKafka} messages lost`);
  return measured;
}

/**
 * The relay core with each client against the raw producers, in alternating rounds of one run
 * (the machine's load changes from one minute to the next: a ratio compares figures taken
 * side by side), as ratios of the medians. The raw producers send messages built before their
 * clock starts, while the relay builds its own inside its clock: raw kafkajs is also measured
 * building each batch's messages right before sending it, and the relay core compared with both.
 */
async function relayCoreRounds(ctx: BenchContext, kafka: Kafka): Promise<void> {
  const clients = benchClients();
  const rounds = sized(ctx, 'RELAY_BENCH_ROUNDS', 3, 1);
  const raw: Partial<Record<KafkaClientName, Timed[]>> = {};
  const core: Partial<Record<KafkaClientName, Timed[]>> = {};
  const rawBuiltInClock: Timed[] = [];
  const alone: Timed[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const client of clients) (raw[client] ??= []).push(await rawRate(ctx, kafka, client));
    rawBuiltInClock.push(await rawRate(ctx, kafka, 'kafkajs', true));
    for (const client of clients) (core[client] ??= []).push(await relayCore(ctx, kafka, client));
    alone.push(await relayCore(ctx, kafka, 'none'));
  }
  const rate = (runs: Timed[]): number => median(runs.map((run) => run.rate));
  const cpu = (runs: Timed[]): number => median(runs.map((run) => run.cpuUs));
  const mainCpu = (runs: Timed[]): number => median(runs.map((run) => run.mainCpuUs ?? NaN));
  const rawKafkajs = rate(raw.kafkajs as Timed[]);
  process.stdout.write(
    `relay core (engine + KafkaPublisher, no MongoDB) vs the raw producers, ${eventCount(ctx)} msgs, batch ${BATCH}, ${rounds} alternating rounds (rate; CPU of this process per event):\n`,
  );
  for (const client of clients) {
    line(`raw ${CLIENT_LABEL[client]}`, formatTimed(raw[client] as Timed[]));
  }
  line('raw kafkajs, messages built in the clock', formatTimed(rawBuiltInClock));
  line('relay core alone (a sender that stores nothing)', formatTimed(alone));
  for (const client of clients) {
    const label = CLIENT_LABEL[client];
    const runs = core[client] as Timed[];
    line(`relay core with ${label}`, formatTimed(runs));
    line(
      `ratio of medians, relay core (${label}) / raw kafkajs`,
      (rate(runs) / rawKafkajs).toFixed(2),
    );
    line(
      `ratio of medians, relay core (${label}) / raw kafkajs built in the clock`,
      (rate(runs) / rate(rawBuiltInClock)).toFixed(2),
    );
    // What the relay adds per event on top of its client's raw producer (medians).
    const own = raw[client] as Timed[];
    if (client !== 'kafkajs') {
      line(
        `ratio of medians, relay core (${label}) / raw ${label}`,
        (rate(runs) / rate(own)).toFixed(2),
      );
    }
    // Next to the relay core alone (its own work, the same with any client, less the client's
    // partitioner it spares) and the main thread's share (without V8's GC helper threads).
    const base = client === 'kafkajs' ? rawBuiltInClock : own;
    const mainGap = mainCpu(runs) - mainCpu(base);
    line(
      `CPU of medians, relay core (${label}) - raw ${label}${client === 'kafkajs' ? ' built in the clock' : ''}`,
      `${(cpu(runs) - cpu(base)).toFixed(1)} µs/event${Number.isNaN(mainGap) ? '' : ` (main thread ${mainGap.toFixed(1)})`}; relay core alone ${cpu(alone).toFixed(1)}`,
    );
  }
  if (raw.platformatic) {
    line(
      'ratio of medians, raw @platformatic/kafka / raw kafkajs',
      (rate(raw.platformatic) / rawKafkajs).toFixed(2),
    );
  }
}

function ratioToRaw(label: string, rate: number, client: KafkaClientName = 'kafkajs'): void {
  const raw = rawRates[client];
  if (raw !== undefined) line(label, (rate / raw).toFixed(2));
}

const RELAY_PARTS: readonly BenchPart[] = [
  {
    name: 'relay/start-up',
    needs: [],
    run: async (ctx) => {
      for (const count of ctx.smoke ? [10_000] : [30_000, 100_000]) {
        line(
          `start-up: ${count.toLocaleString('en')} aggregates waiting for a retry, held by the engine`,
          `${(await startUpWithRetryingAggregates(count)).toFixed(0)} ms`,
        );
      }
    },
  },
  {
    name: 'relay/publisher',
    needs: ['kafka'],
    run: async (ctx) => {
      await publisherLevel(ctx, benchKafka(ctx));
    },
  },
  {
    name: 'relay/core',
    needs: ['kafka'],
    run: (ctx) => relayCoreRounds(ctx, benchKafka(ctx)),
  },
  diagnosticsPart,
  eventMemoryPart,
  {
    name: 'relay/drain',
    needs: ['kafka', 'mongodb'],
    run: async (ctx) => {
      const sizes = drainSizes(ctx);
      for (const events of sizes) {
        const drained = await backlogDrain(ctx, benchKafka(ctx), events);
        ratioToRaw(`ratio relay drain of ${events} / raw kafkajs producer`, drained);
      }
      await backlogDrain(ctx, benchKafka(ctx), sizes.at(-1)!, HEAP_BOUNDED);
    },
  },
  {
    name: 'relay/latency',
    needs: ['kafka', 'mongodb'],
    run: (ctx) => latency(ctx, benchKafka(ctx)),
  },
  {
    name: 'relay/partitioned-drain',
    needs: ['kafka', 'mongodb'],
    run: (ctx) => partitionedDrain(ctx, benchKafka(ctx)),
  },
  {
    name: 'relay/hand-over',
    needs: ['kafka', 'mongodb'],
    run: (ctx) => handOverPause(ctx, benchKafka(ctx)),
  },
];

/** `RELAY_BENCH_PARTS=publisher,core` runs only those parts (names after `relay/`); default all. */
const only = process.env.RELAY_BENCH_PARTS?.split(',').map((name) => `relay/${name.trim()}`);
export const parts: readonly BenchPart[] = only
  ? RELAY_PARTS.filter((part) => only.includes(part.name))
  : RELAY_PARTS;
