/* Consumer benchmarks (`npm run bench -- consume`): is a faster Kafka client worth a custom
 * consumer transport? Figures are printed; no timing is asserted, but a message not received, or
 * an event applied twice or not at all, fails the part.
 * 1. clients (Kafka only): one pre-filled topic (20 000 messages of about 250 bytes, 6
 *    partitions, as the relay writes them) read from the beginning by a fresh group of the raw
 *    kafkajs consumer, the raw @platformatic/kafka consumer, and Nest's Kafka transport
 *    (`OutboxKafkaServer`) with a handler that does nothing; rates from the first message
 *    received to the last, and the group join before it;
 * 2. idempotent (MongoDB + Kafka): the same topic through `OutboxKafkaServer` and an
 *    `@IdempotentHandler()` whose handler writes one document in the handler's transaction, the
 *    library's consume path, with `consumer.batch.maxEvents` 1, 10 and 100 in turn (a fresh
 *    group and database each): rate over the first 2 000 events from the first fetch to the last
 *    commit, latency p50/p99 from a message's fetch to its commit, ratios to batch 1 and part 1.
 * Under `--smoke`: 2 000 messages, 50 idempotent events. */
import { Controller, Injectable, Module } from '@nestjs/common';
import type { INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { InjectConnection, MongooseModule } from '@nestjs/mongoose';
import { logLevel, Partitioners } from 'kafkajs';
import type { Consumer, Kafka } from 'kafkajs';
import diagnostics from 'node:diagnostics_channel';
import type { Message } from 'kafkajs';
import { mongo as driver, Schema } from 'mongoose';
import type { Connection } from 'mongoose';
import { v7 as uuidv7 } from 'uuid';
import {
  IdempotentHandler,
  OUTBOX_CHANNELS,
  OutboxConsumerMetrics,
  OutboxKafkaServer,
  OutboxModule,
  Transactional,
} from '../lib';
import { loadPlatformaticKafka } from '../lib/publisher/platformatic/platformatic-kafka.loader';
import { check, line, sized } from './bench-part';
import type { BenchContext, BenchPart } from './bench-part';
import {
  benchKafka,
  createTopic,
  dbUri,
  dropAndClose,
  suffix,
  topicSize,
} from './support/bench-outbox';

const { MongoClient } = driver;

const EVENT_TYPE = 'OrderPlaced';
const PADDING = 'x'.repeat(120);
/** How long a reader may take to receive the whole topic before the part fails. */
const READ_TIMEOUT_MS = 180_000;

const messageCount = (ctx: BenchContext): number =>
  sized(ctx, 'CONSUME_BENCH_MESSAGES', 20_000, 2_000);
const idempotentCount = (ctx: BenchContext): number =>
  sized(ctx, 'CONSUME_BENCH_IDEMPOTENT_EVENTS', 2_000, 50);

/** A message as the relay writes it: key, JSON value, `ce_id` and `ce_type` headers (~250 bytes). */
function eventMessage(i: number): Message {
  const eventId = uuidv7();
  return {
    key: `agg-${i % 1000}`,
    value: JSON.stringify({ orderId: `o-${i}`, seq: i, total: 42.5, note: PADDING }),
    headers: { ce_id: eventId, ce_type: EVENT_TYPE, ce_source: 'bench' },
  };
}

const messageBytes = (m: Message): number =>
  String(m.key).length +
  String(m.value).length +
  Object.entries(m.headers ?? {}).reduce((n, [k, v]) => n + k.length + String(v).length, 0);

interface Topic {
  name: string;
  count: number;
  bytes: number;
}

async function fillTopic(ctx: BenchContext, kafka: Kafka): Promise<Topic> {
  const name = `bench-consume-${suffix()}.Order`;
  await createTopic(kafka, name);
  const messages = Array.from({ length: messageCount(ctx) }, (_, i) => eventMessage(i));
  const producer = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  for (let i = 0; i < messages.length; i += 500) {
    await producer.sendBatch({
      acks: -1,
      topicMessages: [{ topic: name, messages: messages.slice(i, i + 500) }],
    });
  }
  await producer.disconnect();
  const bytes = messages.reduce((n, m) => n + messageBytes(m), 0) / messages.length;
  return { name, count: messages.length, bytes };
}

/** A reader's figures: the group join (start -> first message) and the rate after it. */
interface ReadFigures {
  joinMs: number;
  rate: number;
  received: number;
}

/** Counts messages until `count` arrived; `firstAt`/`lastAt` in hrtime ns. */
class Clock {
  readonly started = process.hrtime.bigint();
  firstAt = 0n;
  lastAt = 0n;
  received = 0;
  private done!: () => void;
  readonly all: Promise<void>;

  constructor(private readonly count: number) {
    this.all = new Promise((resolve) => (this.done = resolve));
  }

  tick(n = 1): void {
    const now = process.hrtime.bigint();
    if (this.received === 0) this.firstAt = now;
    this.received += n;
    this.lastAt = now;
    if (this.received >= this.count) this.done();
  }

  async figures(label: string): Promise<ReadFigures> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, READ_TIMEOUT_MS)));
    await Promise.race([this.all, timeout]);
    clearTimeout(timer);
    check(
      this.received >= this.count,
      `${label}: ${this.received} of ${this.count} messages received within ${READ_TIMEOUT_MS / 1000} s`,
    );
    const seconds = Number(this.lastAt - this.firstAt) / 1e9;
    return {
      joinMs: Number(this.firstAt - this.started) / 1e6,
      // The first message starts the clock: the other count - 1 arrived after it.
      rate: (this.received - 1) / Math.max(seconds, 1e-9),
      received: this.received,
    };
  }
}

async function kafkajsRead(kafka: Kafka, topic: Topic): Promise<ReadFigures> {
  const consumer = kafka.consumer({ groupId: `bench-kafkajs-${suffix()}` });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic.name], fromBeginning: true });
  const clock = new Clock(topic.count);
  // eachMessage, one partition at a time: how Nest's transport drives kafkajs.
  await consumer.run({ eachMessage: async () => clock.tick() });
  try {
    return await clock.figures('raw kafkajs');
  } finally {
    await consumer.disconnect();
  }
}

async function platformaticRead(ctx: BenchContext, topic: Topic): Promise<ReadFigures> {
  const { Consumer, stringDeserializers } = loadPlatformaticKafka();
  const consumer = new Consumer({
    groupId: `bench-platformatic-${suffix()}`,
    clientId: 'outbox-bench',
    bootstrapBrokers: ctx.kafkaBrokers,
    deserializers: stringDeserializers,
  });
  const clock = new Clock(topic.count);
  const stream = await consumer.consume({
    autocommit: true,
    topics: [topic.name],
    mode: 'earliest',
  });
  stream.on('data', () => clock.tick());
  try {
    return await clock.figures('raw @platformatic/kafka');
  } finally {
    await stream.close();
    await consumer.close(true);
  }
}

// ------------------------------------------------------------ Nest's transport

/** The clock the running Nest handlers tick (one app at a time). */
let nestClock: Clock | undefined;

@Controller()
class NoOpHandler {
  @EventPattern(EVENT_TYPE)
  async onOrder(): Promise<void> {
    nestClock?.tick();
  }
}

@Module({ controllers: [NoOpHandler] })
class NoOpModule {}

function outboxServer(ctx: BenchContext, topic: Topic, group: string): OutboxKafkaServer {
  return new OutboxKafkaServer({
    client: { clientId: 'outbox-bench', brokers: ctx.kafkaBrokers, logLevel: logLevel.NOTHING },
    consumer: { groupId: `${group}-${suffix()}` },
    subscribe: { fromBeginning: true },
    topics: [topic.name],
  });
}

async function nestRead(ctx: BenchContext, topic: Topic): Promise<ReadFigures> {
  const clock = new Clock(topic.count);
  nestClock = clock;
  const app = await NestFactory.createMicroservice(NoOpModule, {
    strategy: outboxServer(ctx, topic, 'bench-nest'),
    logger: ['error'],
  });
  // The clock started before the app: its join includes Nest's bootstrap, as an app's would.
  await app.listen();
  try {
    return await clock.figures("Nest's Kafka transport");
  } finally {
    nestClock = undefined;
    await app.close();
  }
}

/** Part 1's rates, for part 2's ratios. */
const readRates: { kafkajs?: number; platformatic?: number; nest?: number } = {};
let sharedTopic: Topic | undefined;

function print(label: string, figures: ReadFigures, topic: Topic): void {
  line(
    label,
    `${figures.rate.toFixed(0)} msg/s (join ${figures.joinMs.toFixed(0)} ms, ${figures.received}/${topic.count})`,
  );
}

async function clients(ctx: BenchContext): Promise<void> {
  const kafka = benchKafka(ctx);
  const topic = await fillTopic(ctx, kafka);
  sharedTopic = topic;
  check(
    (await topicSize(kafka, topic.name)) === topic.count,
    'the topic does not hold what was sent',
  );
  process.stdout.write(
    `consume rates, ${topic.count} messages of ${topic.bytes.toFixed(0)} bytes, 6 partitions, a fresh group each, from the first message to the last:\n`,
  );
  const kafkajs = await kafkajsRead(kafka, topic);
  readRates.kafkajs = kafkajs.rate;
  print('raw kafkajs consumer (eachMessage)', kafkajs, topic);
  let platformatic: ReadFigures | undefined;
  try {
    loadPlatformaticKafka();
    platformatic = await platformaticRead(ctx, topic);
  } catch (error) {
    if ((error as Error).name === 'BenchCheckError') throw error;
    line('raw @platformatic/kafka consumer', `skipped: ${(error as Error).message}`);
  }
  if (platformatic) {
    readRates.platformatic = platformatic.rate;
    print('raw @platformatic/kafka consumer (stream)', platformatic, topic);
    line('ratio @platformatic/kafka / kafkajs', (platformatic.rate / kafkajs.rate).toFixed(2));
  }
  const nest = await nestRead(ctx, topic);
  readRates.nest = nest.rate;
  print("OutboxKafkaServer (Nest's transport), no-op handler", nest, topic);
  line("ratio Nest's transport / raw kafkajs", (nest.rate / kafkajs.rate).toFixed(2));
}

// ------------------------------------------------------------ the idempotent path

const LedgerSchema = new Schema(
  { eventId: String, seq: Number },
  { versionKey: false, collection: 'bench_ledger' },
);

@Injectable()
class BenchLedger {
  constructor(@InjectConnection() private readonly connection: Connection) {}

  private get ledger() {
    return this.connection.models.BenchLedger ?? this.connection.model('BenchLedger', LedgerSchema);
  }

  /** Joins the handler's transaction, as a handler's service would. */
  @Transactional()
  async record(eventId: string, seq: number): Promise<void> {
    await this.ledger.create([{ eventId, seq }]);
  }
}

@Controller()
class IdempotentOrders {
  constructor(private readonly ledger: BenchLedger) {}

  @EventPattern(EVENT_TYPE)
  @IdempotentHandler({ consumer: 'bench.orders' })
  async onOrder(
    @Payload() payload: { orderId: string; seq: number },
    @Ctx() _context: KafkaContext,
  ): Promise<void> {
    await this.ledger.record(payload.orderId, payload.seq);
  }
}

/** The batch sizes (`consumer.batch.maxEvents`) of the idempotent part, in one run. */
const BATCH_SIZES = [1, 10, 100] as const;

/**
 * When kafkajs handed each message to the transport (its `START_BATCH_PROCESS` event: a fetched
 * partition's offsets), and when each event's transaction committed (the `consumer:applied`
 * diagnostics channel, published after the commit): latency fetch -> commit, and the rate from
 * the first fetch to the last commit.
 */
class FetchToCommit {
  private readonly fetched = new Map<string, bigint>();
  private firstFetch = 0n;
  private lastCommit = 0n;
  readonly latenciesMs: number[] = [];
  private done!: () => void;
  readonly all = new Promise<void>((resolve) => (this.done = resolve));

  constructor(private readonly count: number) {}

  onFetch(topic: string, partition: number, first: string, last: string): void {
    const now = process.hrtime.bigint();
    if (this.firstFetch === 0n) this.firstFetch = now;
    for (let offset = BigInt(first); offset <= BigInt(last); offset++) {
      const key = `${topic}/${partition}/${offset}`;
      if (!this.fetched.has(key)) this.fetched.set(key, now);
    }
  }

  onCommit(topic: string, partition: number, offset: string): void {
    const now = process.hrtime.bigint();
    const fetched = this.fetched.get(`${topic}/${partition}/${offset}`);
    if (fetched !== undefined) this.latenciesMs.push(Number(now - fetched) / 1e6);
    this.lastCommit = now;
    if (this.latenciesMs.length >= this.count) this.done();
  }

  async figures(label: string) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, READ_TIMEOUT_MS)));
    await Promise.race([this.all, timeout]);
    clearTimeout(timer);
    check(
      this.latenciesMs.length >= this.count,
      `${label}: ${this.latenciesMs.length} of ${this.count} events committed within ${READ_TIMEOUT_MS / 1000} s`,
    );
    const sorted = [...this.latenciesMs].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    const seconds = Number(this.lastCommit - this.firstFetch) / 1e9;
    return { rate: this.count / Math.max(seconds, 1e-9), p50: at(0.5), p99: at(0.99) };
  }
}

/** `OutboxKafkaServer` that reports its fetches to `timing`. */
function timedOutboxServer(
  ctx: BenchContext,
  topic: Topic,
  group: string,
  timing: FetchToCommit,
): OutboxKafkaServer {
  const server = outboxServer(ctx, topic, group);
  const bind = server.bindEvents.bind(server);
  server.bindEvents = async (consumer: Consumer) => {
    consumer.on(consumer.events.START_BATCH_PROCESS, ({ payload }) =>
      timing.onFetch(payload.topic, payload.partition, payload.firstOffset, payload.lastOffset),
    );
    return bind(consumer);
  };
  return server;
}

interface IdempotentFigures {
  maxEvents: number;
  rate: number;
  p50: number;
  p99: number;
}

/** One run of the idempotent path with `consumer.batch.maxEvents`, on its own group and database. */
async function idempotentRun(
  ctx: BenchContext,
  topic: Topic,
  events: number,
  maxEvents: number,
): Promise<IdempotentFigures> {
  const db = `bench-consume-${suffix()}`;
  @Module({
    imports: [
      // PoppyDB binds a transaction to its socket: one pooled connection there.
      MongooseModule.forRoot(dbUri(ctx, db, true)),
      OutboxModule.forRoot({ relay: false, consumer: { batch: { maxEvents } } }),
    ],
    controllers: [IdempotentOrders],
    providers: [BenchLedger],
  })
  class IdempotentModule {}

  const timing = new FetchToCommit(events);
  const onApplied = (message: unknown) => {
    const m = message as { consumer: string; topic: string; partition: number; offset: string };
    if (m.consumer === 'bench.orders') timing.onCommit(m.topic, m.partition, m.offset);
  };
  diagnostics.subscribe(OUTBOX_CHANNELS.consumerApplied, onApplied);
  let app: INestMicroservice | undefined;
  try {
    app = await NestFactory.createMicroservice(IdempotentModule, {
      strategy: timedOutboxServer(ctx, topic, `bench-idempotent-${maxEvents}`, timing),
      logger: ['error'],
    });
    await app.listen();
    const figures = await timing.figures(`@IdempotentHandler, batches of ${maxEvents}`);
    const metrics = app.get(OutboxConsumerMetrics).snapshot();
    // Stop the consumer, then check what it applied: each processed event once in the ledger.
    await app.close();
    app = undefined;
    const client = new MongoClient(dbUri(ctx, db, false));
    const database = client.db(db);
    const processed = await database
      .collection('outbox_processed_events')
      .countDocuments({ consumer: 'bench.orders' });
    const ledger = await database.collection('bench_ledger').countDocuments();
    const distinct = (await database.collection('bench_ledger').distinct('eventId')).length;
    line(
      `batch ${maxEvents}: processed records / ledger documents / distinct`,
      `${processed} / ${ledger} / ${distinct}`,
    );
    line(
      `batch ${maxEvents}: batches committed / applied again one at a time, duplicates`,
      `${metrics.batches} / ${metrics.batchFallbacks}, ${metrics.duplicates}`,
    );
    check(processed >= events, `${events - processed} committed events have no processed record`);
    check(ledger === processed, `${ledger} ledger documents for ${processed} processed events`);
    check(distinct === ledger, `${ledger - distinct} events applied twice`);
    await dropAndClose(client);
    return { maxEvents, ...figures };
  } finally {
    diagnostics.unsubscribe(OUTBOX_CHANNELS.consumerApplied, onApplied);
    await app?.close();
  }
}

async function idempotent(ctx: BenchContext): Promise<void> {
  const kafka = benchKafka(ctx);
  // Part 1 filled the topic when it ran in this run; otherwise fill one here.
  const topic = sharedTopic ?? (await fillTopic(ctx, kafka));
  const events = Math.min(idempotentCount(ctx), topic.count);
  const runs: IdempotentFigures[] = [];
  for (const maxEvents of BATCH_SIZES)
    runs.push(await idempotentRun(ctx, topic, events, maxEvents));
  process.stdout.write(
    `the idempotent consume path (OutboxKafkaServer + @IdempotentHandler, one write), first ${events} events of the same topic, ${ctx.mongoKind}, consumer.batch.maxEvents 1 / 10 / 100; rate from the first fetch to the last commit, latency from a message's fetch to its commit:\n`,
  );
  const one = runs[0];
  for (const run of runs) {
    line(
      `batches of ${run.maxEvents}`,
      `${run.rate.toFixed(0)} ev/s (${(1000 / run.rate).toFixed(2)} ms/event), fetch->commit p50 ${run.p50.toFixed(0)} ms, p99 ${run.p99.toFixed(0)} ms, ${(run.rate / one.rate).toFixed(2)}x batch 1`,
    );
  }
  if (readRates.kafkajs) {
    line('ratio batch 1 / raw kafkajs', (one.rate / readRates.kafkajs).toFixed(4));
  }
  if (readRates.nest) {
    line(
      'share of an event spent outside the client and transport (batch 1)',
      `${(100 * (1 - one.rate / readRates.nest)).toFixed(1)} %`,
    );
  }
}

export const parts: readonly BenchPart[] = [
  { name: 'consume/clients', needs: ['kafka'], run: clients },
  { name: 'consume/idempotent', needs: ['kafka', 'mongodb'], run: idempotent },
];
