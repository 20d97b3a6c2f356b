/* The database and topics a bench runs on (each run its own, dropped afterwards), and the
 * events it writes. */
import { Kafka, logLevel } from 'kafkajs';
import { mongo as driver, Types } from 'mongoose';
import { v7 as uuidv7 } from 'uuid';
import type { OutboxEventRecord } from '../../lib';
import { eventSlot } from '../../lib/events/event-slot';
import type { BenchContext } from '../bench-part';

/** A Kafka client on the bench's brokers, quiet. */
export const benchKafka = (ctx: BenchContext, clientId = 'outbox-bench'): Kafka =>
  new Kafka({ clientId, brokers: ctx.kafkaBrokers, logLevel: logLevel.NOTHING });

/** A suffix that makes a name this run's own. */
export const suffix = (): string =>
  `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

/** The bench server's connection string, on database `db` (PoppyDB: one connection if asked). */
export function dbUri(ctx: BenchContext, db: string, poolOfOne: boolean): string {
  const url = new URL(ctx.mongoUri as string);
  url.pathname = `/${db}`;
  if (poolOfOne && ctx.mongoKind === 'poppydb') url.searchParams.set('maxPoolSize', '1');
  return url.toString();
}

/** Creates `topic` with 6 partitions and waits for their leaders. */
export async function createTopic(kafka: Kafka, topic: string): Promise<void> {
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

/** How many records `topic` holds, over its partitions. */
export async function topicSize(kafka: Kafka, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  } finally {
    await admin.disconnect();
  }
}

/** Drops the bench's database (best effort) and closes the client. */
export async function dropAndClose(client: driver.MongoClient): Promise<void> {
  await client
    .db()
    .dropDatabase()
    .catch(() => undefined);
  await client.close();
}

/** A bench's own outbox: a fresh database, a topic prefix with its `Order` topic, a client. */
export interface BenchOutbox {
  db: string;
  /** The database's connection string, for the relay (its own pool). */
  mongoUri: string;
  /** The relay's `topicPrefix`: the events (aggregate type `Order`) go to `topic`. */
  prefix: string;
  topic: string;
  client: driver.MongoClient;
  outbox: driver.Collection;
  /** Drops the database and closes the client. */
  close(): Promise<void>;
}

/** Opens a `BenchOutbox` named after the bench (`bench-<name>-<suffix>`), its topic created. */
export async function openBenchOutbox(
  ctx: BenchContext,
  kafka: Kafka,
  name: string,
): Promise<BenchOutbox> {
  const db = `bench-${name}-${suffix()}`;
  const prefix = `${db}.`;
  const topic = `${prefix}Order`;
  await createTopic(kafka, topic);
  const mongoUri = dbUri(ctx, db, false);
  const client = new driver.MongoClient(mongoUri);
  await client.connect();
  const outbox = client.db().collection('outbox');
  return { db, mongoUri, prefix, topic, client, outbox, close: () => dropAndClose(client) };
}

const AGGREGATES = 1000;

/** Event `i`, pending, as the write side stores it: 1 000 aggregates in turn. */
export function makeEvent(i: number): OutboxEventRecord {
  const aggregateId = `agg-${i % AGGREGATES}`;
  return {
    _id: new Types.ObjectId(),
    eventId: uuidv7(),
    eventType: 'OrderPlaced',
    aggregateType: 'Order',
    aggregateId,
    slot: eventSlot('Order', aggregateId),
    payload: { orderId: `o-${i}`, seq: i, total: 42.5, items: [{ sku: 'sku-1', qty: 2 }] },
    occurredAt: new Date(),
    status: 'pending',
    attempts: 0,
  };
}
