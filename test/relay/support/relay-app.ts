import { Injectable, Logger, Module } from '@nestjs/common';
import type { LogLevel } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import {
  getConnectionToken,
  InjectModel,
  MongooseModule,
  Prop,
  Schema,
  SchemaFactory,
} from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import { mongo } from 'mongoose';
import type { Connection, Model } from 'mongoose';
import {
  EmitsEvent,
  OutboxModule,
  OutboxRelay,
  OutboxRelayMetrics,
  Transactional,
} from '../../../lib';
import type { OutboxModuleOptions, RelayOptions } from '../../../lib';
import {
  createTopics,
  mongoUriFor,
  readTopic,
  sleep,
  testServers,
  uniqueName,
  waitFor,
} from '../../harness';
import type { KafkaRecord } from '../../harness';

@Schema({ collection: 'relay_orders', versionKey: false })
export class RelayOrder {
  @Prop({ required: true })
  _id!: string;

  @Prop({ required: true })
  aggregate!: string;

  @Prop({ required: true })
  seq!: number;
}
export const RelayOrderSchema = SchemaFactory.createForClass(RelayOrder);

/** A domain service as users write it. */
@Injectable()
export class RelayOrderService {
  constructor(@InjectModel(RelayOrder.name) private readonly orders: Model<RelayOrder>) {}

  @Transactional()
  @EmitsEvent<RelayOrder>('OrderPlaced', {
    aggregateType: 'Order',
    aggregateId: (order) => order.aggregate,
    payload: (order) => ({ orderId: order._id, seq: order.seq }),
    headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  })
  async place(id: string, aggregate: string, seq: number): Promise<RelayOrder> {
    const [order] = await this.orders.create([{ _id: id, aggregate, seq }]);
    return order.toObject();
  }

  @Transactional()
  @EmitsEvent<RelayOrder>('OrderPlaced', {
    aggregateType: 'Order',
    aggregateId: (order) => order.aggregate,
    payload: (order) => ({ orderId: order._id, seq: order.seq }),
  })
  async placeThenFail(id: string, aggregate: string): Promise<RelayOrder> {
    await this.orders.create([{ _id: id, aggregate, seq: -1 }]);
    throw new Error('rolled back on purpose');
  }
}

@Module({
  imports: [MongooseModule.forFeature([{ name: RelayOrder.name, schema: RelayOrderSchema }])],
  providers: [RelayOrderService],
})
export class RelayOrdersModule {}

export interface RelayTestApp {
  app: INestApplicationContext;
  connection: Connection;
  orders: RelayOrderService;
  relay?: OutboxRelay;
  metrics?: OutboxRelayMetrics;
  close(): Promise<void>;
}

/** Relay options fast enough for tests. */
export function testRelayOptions(topicPrefix: string, extra: RelayOptions = {}): RelayOptions {
  return {
    kafka: {
      brokers: testServers().kafkaBrokers,
      retry: { retries: 3, initialRetryTime: 200, maxRetryTime: 2000 },
    },
    topicPrefix,
    batchSize: 200,
    maxInFlight: 2000,
    sweepIntervalMs: 500,
    sweepGraceMs: 1000,
    idleMs: 200,
    checkpointEvery: { events: 100, ms: 200 },
    lease: { enabled: true, durationMs: 3000, renewMs: 500 },
    backoff: { initialMs: 100, maxMs: 1000, jitter: 0.2 },
    shutdownTimeoutMs: 5000,
    ...extra,
  };
}

/**
 * A real app on database `db`. With `relay: false`: the writer (MongooseModule, OutboxModule
 * without relay, the orders module; one pooled connection on PoppyDB, which binds transactions
 * to a socket). With relay options: a relay-only app on its own named connection `relay` (so
 * that a writer and relays can live in one test process without sharing a connection).
 */
export async function startRelayApp(
  db: string,
  relay: RelayOptions | false,
  options: Omit<OutboxModuleOptions, 'relay' | 'connectionName'> = {},
): Promise<RelayTestApp> {
  const url = new URL(mongoUriFor(db));
  const writer = relay === false;
  if (writer && testServers().mongoKind === 'poppydb') url.searchParams.set('maxPoolSize', '1');
  const connectionName = writer ? undefined : 'relay';
  const moduleRef = await Test.createTestingModule({
    imports: [
      MongooseModule.forRoot(url.toString(), connectionName ? { connectionName } : {}),
      OutboxModule.forRoot({ isGlobal: writer, ...options, connectionName, relay }),
      ...(writer ? [RelayOrdersModule] : []),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: testLogLevels() });
  await app.init();
  const connection = app.get<Connection>(getConnectionToken(connectionName));
  return {
    app,
    connection,
    orders: writer ? app.get(RelayOrderService) : (undefined as unknown as RelayOrderService),
    relay: writer ? undefined : app.get(OutboxRelay),
    metrics: writer ? undefined : app.get(OutboxRelayMetrics),
    close: () => app.close(),
  };
}

/** The usual set-up of a relay suite, filled in by its `beforeAll`. */
export interface RelayTestBed {
  db: string;
  /** Topic prefix of the suite; its `Order` topic is `topic`. */
  prefix: string;
  topic: string;
  writer: RelayTestApp;
  /** Starts a relay app on the suite's database (test options by default), closed after the suite. */
  startRelay(options?: RelayOptions): Promise<RelayTestApp>;
  /** Closes the relays started so far (graceful stops). */
  stopRelays(): Promise<void>;
}

/**
 * Registers, in the calling `describe`, the set-up most relay suites share: test log levels, a
 * fresh database, a topic prefix with its `Order` topic (unless `createTopic: false`) and a
 * writer app; afterwards it closes the relays started through it, drops the database and closes
 * the writer.
 */
export function relayTestBed(label: string, opts: { createTopic?: boolean } = {}): RelayTestBed {
  const relays: RelayTestApp[] = [];
  const bed = {
    startRelay: async (options?: RelayOptions) => {
      const relay = await startRelayApp(bed.db, options ?? testRelayOptions(bed.prefix));
      relays.push(relay);
      return relay;
    },
    stopRelays: async () => {
      for (const relay of relays.splice(0)) await relay.close();
    },
  } as RelayTestBed;
  beforeAll(async () => {
    Logger.overrideLogger(testLogLevels());
    bed.db = uniqueName(`relay-${label}`);
    bed.prefix = `${uniqueName(label)}.`;
    bed.topic = `${bed.prefix}Order`;
    if (opts.createTopic !== false) await createTopics([bed.topic]);
    bed.writer = await startRelayApp(bed.db, false);
  });
  afterAll(async () => {
    for (const relay of relays) await relay.close();
    await bed.writer?.connection.dropDatabase().catch(() => undefined);
    await bed.writer?.close();
  });
  return bed;
}

/** Nest log levels of test apps: errors only, everything with RELAY_TEST_LOGS=1. */
export function testLogLevels(): LogLevel[] {
  return process.env.RELAY_TEST_LOGS ? ['error', 'warn', 'log'] : ['error'];
}

export { sleep, waitFor } from '../../harness';

/** What `writeOrders` writes: `total` orders over `aggregates` aggregates by `workers` writers. */
export interface OrderWriting {
  total: number;
  aggregates: number;
  /** Concurrent writers (each owns its aggregates). PoppyDB runs one transaction at a time. */
  workers: number;
}

/**
 * Places `total` orders through `app` (one event each), every worker owning its aggregates and
 * writing them one call at a time, so per aggregate the order in which calls return is the
 * commit order (`commitOrder`, eventIds by aggregate). Each worker pauses `pause.ms` every
 * `pause.every` orders, so relays can be killed and started while it writes.
 *
 * An order whose transaction the server refused (a `MongoServerError` without a transient
 * label, which `@Transactional` rightly does not retry) is placed again, as a client would, at
 * most twice, and counted in `refused`: the claims judged here are the relay's, and a refused
 * transaction commits nothing. If its event is in the outbox after all (a commit whose answer
 * was lost), the order counts as written and is not placed again.
 */
export function writeOrders(
  app: RelayTestApp,
  run: OrderWriting,
  pause: { every: number; ms: number },
): {
  commitOrder: Map<string, string[]>;
  written: () => number;
  refused: () => number;
  done: Promise<void>;
} {
  const commitOrder = new Map<string, string[]>();
  const width = String(run.aggregates - 1).length;
  let written = 0;
  let refused = 0;
  // PoppyDB binds a transaction to the TCP connection (its writer has one, see startRelayApp):
  // transactions of several workers interleaved on it lose writes (an order read back without
  // its event), so there the workers take turns; each still owns its aggregates.
  let turn: Promise<unknown> = Promise.resolve();
  const oneAtATime = testServers().mongoKind === 'poppydb';
  const placeOnce = (n: number, aggregate: string): Promise<unknown> => {
    const call = () => app.orders.place(`o-${n}`, aggregate, n);
    if (!oneAtATime) return call();
    const mine = turn.then(call);
    turn = mine.catch(() => undefined);
    return mine;
  };
  const eventOf = async (n: number) => {
    const [doc] = await app.connection
      .collection('outbox')
      .find({ 'payload.orderId': `o-${n}` })
      .toArray();
    return doc?.eventId as string | undefined;
  };
  const place = async (n: number, aggregate: string): Promise<string | undefined> => {
    for (let attempt = 1; ; attempt++) {
      try {
        await placeOnce(n, aggregate);
        return await eventOf(n);
      } catch (error) {
        if (!(error instanceof mongo.MongoServerError) || attempt === 3) throw error;
        refused++;
        const committed = await eventOf(n);
        if (committed) return committed;
      }
    }
  };
  const write = async (worker: number): Promise<void> => {
    for (let n = worker; n < run.total; n += run.workers) {
      const aggregate = `agg-${(n % run.aggregates).toString().padStart(width, '0')}`;
      const eventId = await place(n, aggregate);
      if (!eventId) throw new Error(`order o-${n} was placed, but its event is not in the outbox`);
      const list = commitOrder.get(aggregate) ?? [];
      list.push(eventId);
      commitOrder.set(aggregate, list);
      written++;
      if (n % pause.every === worker) await sleep(pause.ms);
    }
  };
  const done = Promise.all(Array.from({ length: run.workers }, (_, w) => write(w))).then(
    () => undefined,
  );
  return { commitOrder, written: () => written, refused: () => refused, done };
}

/** Per aggregate, checks the first occurrence of each event is in commit order; returns duplicates. */
export function checkFirstOccurrences(
  records: Array<{ key: string | null; headers: Record<string, string> }>,
  commitOrder: Map<string, string[]>,
): { missing: string[]; duplicates: number; outOfOrder: string[] } {
  const seen = new Set<string>();
  const firsts = new Map<string, string[]>();
  let duplicates = 0;
  for (const record of records) {
    const id = record.headers.ce_id;
    if (seen.has(id)) {
      duplicates++;
      continue;
    }
    seen.add(id);
    const list = firsts.get(record.key ?? '') ?? [];
    list.push(id);
    firsts.set(record.key ?? '', list);
  }
  const missing: string[] = [];
  const outOfOrder: string[] = [];
  for (const [aggregate, ids] of commitOrder) {
    for (const id of ids) if (!seen.has(id)) missing.push(id);
    const got = firsts.get(aggregate) ?? [];
    const expected = ids.filter((id) => seen.has(id));
    if (got.join() !== expected.join()) outOfOrder.push(aggregate);
  }
  return { missing, duplicates, outOfOrder };
}

/**
 * Waits until the outbox has no pending event (the relay's own account), then reads every record
 * of `topic` that arrives within `quietMs` (duplicates included).
 */
export async function readAllAfterDrain(
  connection: Connection,
  topic: string,
  timeoutMs = 90_000,
  quietMs = 8000,
): Promise<KafkaRecord[]> {
  await waitFor(
    async () => (await connection.collection('outbox').countDocuments({ status: 'pending' })) === 0,
    timeoutMs,
    'every outbox event to be published',
  );
  return readTopic(topic, { count: Number.MAX_SAFE_INTEGER, timeoutMs: quietMs });
}

/**
 * A resume token from far outside the oplog window (as after a long outage), made from a real
 * `token` of the same deployment: real MongoDB answers 286 ChangeStreamHistoryLost to it.
 * PoppyDB's tokens are plain counters, and it does not reject it.
 */
export function ancientResumeToken(token: { _data?: unknown } | undefined): { _data: string } {
  const data = String(token?._data ?? '');
  return {
    _data: data.startsWith('82') ? `82${'00000001'}${'00000001'}${data.slice(18)}` : 'gone',
  };
}
