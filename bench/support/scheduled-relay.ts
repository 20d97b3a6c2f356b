/* What the scheduled-events benches share: events as the write side stores them with a due time,
 * the relay of bench/scheduled-relay.child.ts driven request by request, the topic read back
 * with each record's timestamp, and the wait for the outbox to have nothing pending. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { IHeaders, Kafka } from 'kafkajs';
import type { mongo as driver } from 'mongoose';
import type { OutboxEventRecord } from '../../lib';
import { KAFKA_HEADERS } from '../../lib/documents/outbox-event.envelope';
import { sized } from '../bench-part';
import type { BenchContext } from '../bench-part';
import type { ChildRequest } from '../scheduled-relay.child';
import { makeEvent, suffix } from './bench-outbox';
import type { BenchOutbox } from './bench-outbox';
import { RelayChild } from './relay-child';

const BATCH = 500;
const INSERT_BATCH = 10_000;
/** How long after the due time a part waits for the events to leave `pending`. */
export const DONE_TIMEOUT_MS = 300_000;

/** How far ahead of the server's time a burst is due: it must all be written before. */
export const burstLeadMs = (ctx: BenchContext): number =>
  sized(ctx, 'SCHEDULED_BENCH_LEAD_MS', 15_000, 5_000);

export const mb = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MB`;
export const count = (n: number): string => n.toLocaleString('en');
export const ratio = (a: number, b: number): string => (b > 0 ? (a / b).toFixed(2) : 'n/a');
export const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** The scheduled event `i`, due at `availableAt`, as the write side stores it. */
export function scheduledEvent(i: number, availableAt: Date): OutboxEventRecord {
  return { ...makeEvent(i), payload: { seq: i }, availableAt };
}

/** Writes `total` events made by `make`, INSERT_BATCH per insertMany; seconds taken. */
export async function insertAll(
  outbox: driver.Collection,
  total: number,
  make: (i: number) => OutboxEventRecord,
): Promise<number> {
  const started = Date.now();
  for (let i = 0; i < total; i += INSERT_BATCH) {
    const n = Math.min(INSERT_BATCH, total - i);
    try {
      await outbox.insertMany(Array.from({ length: n }, (_, k) => make(i + k)) as never[]);
    } catch (error) {
      // E.g. a server short of memory (PoppyDB refuses writes above its heap watermark).
      throw new Error(
        `the server refused the events after ${count(i)} of ${count(total)} were written ` +
          `(set a smaller SCHEDULED_BENCH_PENDING or SCHEDULED_BENCH_BURST): ${(error as Error).message}`,
      );
    }
  }
  return (Date.now() - started) / 1000;
}

/** The relay of bench/scheduled-relay.child.ts, driven request by request. */
export class RelayProcess {
  private readonly child: RelayChild;

  constructor(bench: BenchOutbox, relayOptions: object) {
    this.child = new RelayChild('scheduled-relay', {
      mongoUri: bench.mongoUri,
      prefix: bench.prefix,
      batch: BATCH,
      relayOptions,
      execArgv: ['--expose-gc'],
    });
  }

  /** Its first message, `{ ready: true }`. */
  ready(): Promise<unknown> {
    return this.child.next();
  }

  request<T>(request: ChildRequest): Promise<T> {
    const reply = this.child.next<T>();
    this.child.process.send(request);
    return reply;
  }

  async stop(): Promise<void> {
    this.child.process.send('stop');
    await this.child.exited;
  }
}

/** A relay process on `db` with `options` (else the defaults), started; its start-up in seconds. */
export async function startRelay(
  bench: BenchOutbox,
  options: object = {},
): Promise<{ relay: RelayProcess; startSeconds: number }> {
  const relay = new RelayProcess(bench, options);
  await relay.ready();
  const { startSeconds } = await relay.request<{ startSeconds: number }>('start');
  return { relay, startSeconds };
}

export interface Delivery {
  eventId: string;
  timestamp: number;
}

/** Every record of `topic` (expected: `total`, duplicates included), read from the beginning. */
export async function readTopic(kafka: Kafka, topic: string, total: number): Promise<Delivery[]> {
  const deliveries: Delivery[] = [];
  const consumer = kafka.consumer({ groupId: `bench-sched-${suffix()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const id = (message.headers as IHeaders)[KAFKA_HEADERS.id];
        deliveries.push({ eventId: String(id), timestamp: Number(message.timestamp) });
      },
    });
    const deadline = Date.now() + 60_000;
    while (deliveries.length < total && Date.now() < deadline) await sleep(50);
  } finally {
    await consumer.disconnect();
  }
  return deliveries;
}

/** What reached Kafka of the events `ids`, due at `due`: first records' lateness, sorted (ms). */
export interface DeliveryReport {
  lost: number;
  duplicates: number;
  early: number;
  lateness: number[];
}

export function deliveryReport(
  deliveries: readonly Delivery[],
  ids: ReadonlySet<string>,
  due: Date,
): DeliveryReport {
  const firstAt = new Map<string, number>();
  for (const { eventId, timestamp } of deliveries) {
    firstAt.set(eventId, Math.min(firstAt.get(eventId) ?? Infinity, timestamp));
  }
  const lateness = [...firstAt.values()].map((at) => at - due.getTime()).sort((a, b) => a - b);
  return {
    lost: [...ids].filter((id) => !firstAt.has(id)).length,
    duplicates: deliveries.length - firstAt.size,
    early: lateness.filter((ms) => ms < 0).length,
    lateness,
  };
}

/** Waits until no event matching `filter` is pending (at most DONE_TIMEOUT_MS); those left. */
export async function untilNonePending(
  outbox: driver.Collection,
  filter: driver.Filter<driver.Document> = {},
): Promise<number> {
  const deadline = Date.now() + DONE_TIMEOUT_MS;
  let pending = await outbox.countDocuments({ ...filter, status: 'pending' });
  while (pending > 0 && Date.now() < deadline) {
    await sleep(10);
    pending = await outbox.countDocuments({ ...filter, status: 'pending' });
  }
  return pending;
}
