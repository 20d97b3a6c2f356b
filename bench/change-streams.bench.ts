/* How a partitioned relay should follow the outbox (`npm run bench -- change-streams`): the
 * same burst of inserts read by
 * - one change stream filtered to every slot (one stream per instance, filtered to the
 *   partitions it holds, when it holds them all), and by
 * - one stream per partition, each filtered on the server to its slot range (the relay's choice:
 *   a partition's checkpoint is its own stream's token),
 * through the relay's own `MongoChangeSource`, in this process. Prints the time until every
 * insert was delivered, the events per second, and this process's CPU time (the driver decoding
 * the changes); the database's own cost is in the wall time. A stream that does not deliver
 * every insert fails the part (after the other stream counts ran). */
import { setTimeout as sleep } from 'node:timers/promises';
import { mongo as driver } from 'mongoose';
import type { OutboxEventRecord } from '../lib/documents/outbox-event.document';
import { partitionOfSlot, slotsOfPartition } from '../lib/relay/ports/partition-layout';
import type { ChangeCursor } from '../lib/relay/ports/change-source';
import { MongoChangeSource } from '../lib/relay/mongo/mongo-change.source';
import { dbUri, dropAndClose, makeEvent, suffix } from './support/bench-outbox';
import { BenchCheckError, line, sized } from './bench-part';
import type { BenchContext, BenchPart } from './bench-part';

const { MongoClient } = driver;

/**
 * Burst size; `STREAMS_BENCH_EVENTS` overrides it (500 under `--smoke`). On PoppyDB a single
 * stream that 30 000 inserts reach at once is closed by the server ("closed by itself"; the relay
 * then recovers from the collection), so the default stays below that.
 */
const burstSize = (ctx: BenchContext): number => sized(ctx, 'STREAMS_BENCH_EVENTS', 10_000, 500);
const PARTITIONS = [1, 6, 16];
const BATCH = 500;

/** Reads `cursor` until it delivered `expected` changes (or `deadline` passed). */
async function readAll(cursor: ChangeCursor, expected: number, deadline: number): Promise<void> {
  let seen = 0;
  while (seen < expected) {
    if (Date.now() > deadline) throw new Error(`only ${seen} of ${expected} changes delivered`);
    seen += (await cursor.next(BATCH)).changes.length;
  }
}

/** One burst of `EVENTS` inserts read by `partitions` streams, each filtered to its slot range. */
async function burst(ctx: BenchContext, partitions: number, count: number): Promise<void> {
  const client = new MongoClient(dbUri(ctx, `bench-streams-${suffix()}`, false));
  await client.connect();
  const outbox = client.db().collection<OutboxEventRecord>('outbox');
  await client.db().createCollection('outbox');
  const events = Array.from({ length: count }, (_, i) => makeEvent(i));
  const expected = new Array<number>(partitions).fill(0);
  for (const event of events) expected[partitionOfSlot(event.slot!, partitions)]++;
  const options = { batchSize: BATCH, idleMs: 200 };
  const cursors = await Promise.all(
    Array.from({ length: partitions }, (_, p) =>
      new MongoChangeSource(outbox as never, options, slotsOfPartition(p, partitions)).open(
        undefined,
      ),
    ),
  );
  try {
    await sleep(500); // the streams are open on the server before the first insert
    const cpu = process.cpuUsage();
    const started = Date.now();
    const deadline = started + 300_000;
    const reading = Promise.all(cursors.map((cursor, p) => readAll(cursor, expected[p], deadline)));
    reading.catch(() => undefined); // awaited below, after the inserts
    for (let i = 0; i < events.length; i += 5000)
      await outbox.insertMany(events.slice(i, i + 5000));
    await reading;
    const seconds = (Date.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    line(
      partitions === 1
        ? 'one stream for all partitions (per instance)'
        : `${partitions} streams, one per partition`,
      `${(count / seconds).toFixed(0)} ev/s (${seconds.toFixed(1)} s); CPU of this process ` +
        `${((used.user + used.system) / 1e6).toFixed(1)} s`,
    );
  } finally {
    await Promise.all(cursors.map((cursor) => cursor.close()));
    await dropAndClose(client);
  }
}

async function streams(ctx: BenchContext): Promise<void> {
  const count = burstSize(ctx);
  process.stdout.write(
    `change streams delivering a burst of ${count} inserts (${ctx.mongoKind}; one process, ` +
      `the relay's MongoChangeSource):\n`,
  );
  const failed: number[] = [];
  for (const partitions of PARTITIONS) {
    await burst(ctx, partitions, count).catch((error: Error) => {
      failed.push(partitions);
      line(`${partitions} stream(s)`, `failed: ${error.message}`);
    });
  }
  if (failed.length > 0)
    throw new BenchCheckError(`change streams failed with ${failed.join(', ')} stream(s)`);
}

export const parts: readonly BenchPart[] = [
  { name: 'change-streams', needs: ['mongodb'], run: streams },
];
