/* Partitioned relays (`npm run bench -- relay`, after the single relay's figures):
 * 1. the drain of a pre-filled outbox by 1, 2 and 3 relay processes sharing `partitions: 6`,
 *    side by side, with each process's share and CPU time (where the time goes: a process whose
 *    CPU time is well below the wall-clock time waits, mostly for the database);
 * 2. the hand-over pause after a SIGKILL: 3 relays, a steady stream of events, one relay
 *    killed; how long until its partitions are held again, and the longest insert -> published
 *    delay of the events in its partitions (the other partitions' for comparison).
 * Both need the partitioned relay (`relay.partitions`); without it they print why and go on. */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kafka } from 'kafkajs';
import { mongo as driver } from 'mongoose';
import type { Connection } from 'mongoose';
import { slotsOfPartition } from '../lib/relay/ports/partition-layout';
import {
  describeSpread,
  isEven,
  ownerPid,
  readSpread,
} from '../test/relay/support/partition-spread';
import type { DrainReport } from './relay-drain.child';
import {
  compileDrainChild,
  createTopic,
  dbUri,
  line,
  makeEvent,
  suffix,
  topicSize,
} from './relay.bench';
import type { BenchContext } from './relay.bench';

const { MongoClient } = driver;

const PARTITIONS = 6;
/** Backlog of the side-by-side drains; `RELAY_BENCH_PARTITIONED_EVENTS` overrides it. */
const EVENTS = Number(process.env.RELAY_BENCH_PARTITIONED_EVENTS ?? 30_000);
const BATCH = 500;
/** The hand-over run's lease: short enough to measure a few pauses quickly. */
const LEASE = { enabled: true, durationMs: 3000, renewMs: 500 };

interface SharedRelay {
  child: ChildProcess;
  ready: Promise<void>;
  done: Promise<DrainReport>;
  exited: Promise<void>;
}

function forkShared(
  ctx: BenchContext,
  db: string,
  prefix: string,
  events: number,
  options: object,
  stay = false,
): SharedRelay {
  const child = fork(compileDrainChild(), [], {
    env: {
      ...process.env,
      MONGODB_URI: dbUri(ctx, db, false),
      BENCH_PREFIX: prefix,
      BENCH_EVENTS: String(events),
      BENCH_BATCH: String(BATCH),
      BENCH_SHARED: '1',
      BENCH_STAY: stay ? '1' : '0',
      RELAY_BENCH_OPTIONS: JSON.stringify({ partitions: PARTITIONS, ...options }),
    },
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // The error's own line (e.g. an OutboxOptionsError), without colours.
  const why = (): string =>
    // eslint-disable-next-line no-control-regex
    (output.replace(/\x1b\[[0-9;]*m/g, '').match(/^.*(Error|error).*$/m)?.[0] ?? output)
      .trim()
      .slice(0, 300);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let report: DrainReport | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (message: { ready?: boolean } & DrainReport) => {
      if (message.ready) resolve();
      else report = message;
    });
    child.once('exit', (code) =>
      reject(new Error(`relay process exited (${code}) before ready: ${why()}`)),
    );
  });
  const done = new Promise<DrainReport>((resolve, reject) =>
    child.once('exit', (code) =>
      report ? resolve(report) : reject(new Error(`relay process exited with ${code}: ${why()}`)),
    ),
  );
  ready.catch(() => undefined);
  done.catch(() => undefined);
  return { child, ready, done, exited };
}

async function fill(outbox: driver.Collection, events: number): Promise<void> {
  for (let i = 0; i < events; i += 5000) {
    const n = Math.min(5000, events - i);
    await outbox.insertMany(Array.from({ length: n }, (_, k) => makeEvent(i + k)) as never[]);
  }
}

/** One drain of `events` by `relays` processes; undefined (and why) when they cannot run. */
async function drainWith(
  ctx: BenchContext,
  kafka: Kafka,
  relays: number,
  events: number,
): Promise<string | undefined> {
  const db = `bench-parts-${suffix()}`;
  const prefix = `bench-parts-${suffix()}.`;
  const topic = `${prefix}Order`;
  await createTopic(kafka, topic);
  const client = new MongoClient(dbUri(ctx, db, false));
  await client.connect();
  const outbox = client.db().collection('outbox');
  const children: SharedRelay[] = [];
  try {
    await fill(outbox, events);
    for (let i = 0; i < relays; i++) children.push(forkShared(ctx, db, prefix, events, {}));
    await Promise.all(children.map((c) => c.ready));
    const started = Date.now();
    for (const c of children) c.child.send('go');
    const reports = await Promise.all(children.map((c) => c.done));
    const seconds = (Date.now() - started) / 1000;
    const inKafka = await topicSize(kafka, topic);
    line(
      `${relays} relay process${relays > 1 ? 'es' : ''}, ${PARTITIONS} partitions`,
      `${(events / seconds).toFixed(0)} ev/s (${seconds.toFixed(1)} s); ` +
        `published per process ${reports.map((r) => r.published).join(' / ')}; ` +
        `CPU per process ${reports.map((r) => `${r.cpuSeconds.toFixed(1)} s`).join(' / ')}; ` +
        `${inKafka - events} duplicates`,
    );
    return undefined;
  } catch (error) {
    for (const c of children) c.child.kill('SIGKILL');
    return (error as Error).message;
  } finally {
    await client
      .db()
      .dropDatabase()
      .catch(() => undefined);
    await client.close();
  }
}

export async function partitionedDrain(ctx: BenchContext, kafka: Kafka): Promise<void> {
  process.stdout.write(
    `partitioned relays draining a pre-filled outbox of ${EVENTS} events (${ctx.mongoKind}, ` +
      `each relay in its own process, ${PARTITIONS} partitions, ${ctx.mongoKind === 'poppydb' ? 'PoppyDB and ' : ''}Kafka on this machine):\n`,
  );
  for (const relays of [1, 2, 3]) {
    const failure = await drainWith(ctx, kafka, relays, EVENTS);
    if (failure) {
      process.stdout.write(`  skipped: the partitioned relay could not run (${failure})\n`);
      return;
    }
  }
}

/** The hand-over pause after a SIGKILL, under a steady stream of events. */
export async function handOverPause(ctx: BenchContext, kafka: Kafka): Promise<void> {
  const db = `bench-handover-${suffix()}`;
  const prefix = `bench-handover-${suffix()}.`;
  await createTopic(kafka, `${prefix}Order`);
  const client = new MongoClient(dbUri(ctx, db, false));
  await client.connect();
  const outbox = client.db().collection('outbox');
  const connection = { db: client.db() } as unknown as Connection;
  // Never done on their own: stopped by the bench.
  const children = [0, 1, 2].map(() => forkShared(ctx, db, prefix, 0, { lease: LEASE }, true));
  let writing = true;
  const inserted = new Map<string, number>();
  let n = 0;
  const writer = (async () => {
    while (writing) {
      const batch = Array.from({ length: 10 }, () => makeEvent(n++));
      const at = Date.now();
      await outbox.insertMany(batch as never[]);
      for (const e of batch) inserted.set(e.eventId, at);
      await sleep(50);
    }
  })();
  try {
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.child.send('go');
    const pids = () =>
      children.filter((c) => c.child.exitCode === null && !c.child.killed).map((c) => c.child.pid!);
    const waitEven = async (what: string) => {
      const deadline = Date.now() + 60_000;
      while (!isEven(await readSpread(connection), pids())) {
        if (Date.now() > deadline) throw new Error(`no even spread: ${what}`);
        await sleep(50);
      }
    };
    await waitEven('3 relays');
    await sleep(2000);
    const before = await readSpread(connection);
    const victim = children[0];
    const victimPartitions =
      [...before.byOwner].find(([owner]) => ownerPid(owner) === victim.child.pid)?.[1] ?? [];
    const killedAt = Date.now();
    victim.child.kill('SIGKILL');
    await victim.exited;
    await waitEven('2 relays');
    const heldAgainMs = Date.now() - killedAt;
    const spread = describeSpread(await readSpread(connection));
    await sleep(3000);
    writing = false;
    await writer;
    while ((await outbox.countDocuments({ status: 'pending' })) > 0) await sleep(100);
    const ranges = victimPartitions.map((p) => slotsOfPartition(p, PARTITIONS));
    const inVictim = (slot: number) => ranges.some((r) => slot >= r.from && slot < r.to);
    const docs = await outbox
      .find({}, { projection: { eventId: 1, slot: 1, publishedAt: 1 } })
      .toArray();
    let victimMax = 0;
    let othersMax = 0;
    for (const doc of docs) {
      const at = inserted.get(doc.eventId as string);
      if (at === undefined || at < killedAt - 5000) continue;
      const delay = (doc.publishedAt as Date).getTime() - at;
      if (inVictim(doc.slot as number)) victimMax = Math.max(victimMax, delay);
      else othersMax = Math.max(othersMax, delay);
    }
    process.stdout.write(
      `hand-over after a SIGKILL (3 relays, ${PARTITIONS} partitions, lease ${LEASE.durationMs} ms, renew ${LEASE.renewMs} ms, 200 ev/s):\n`,
    );
    line(
      `kill -> partitions [${victimPartitions.join(',')}] held again`,
      `${heldAgainMs} ms (${spread})`,
    );
    line('longest insert -> published, events of those partitions', `${victimMax} ms`);
    line('... events of the other partitions (same window)', `${othersMax} ms`);
  } catch (error) {
    writing = false;
    await writer.catch(() => undefined);
    process.stdout.write(`hand-over pause skipped: ${(error as Error).message}\n`);
  } finally {
    for (const c of children) c.child.kill('SIGTERM');
    await Promise.all(children.map((c) => Promise.race([c.exited, sleep(10_000)])));
    for (const c of children) c.child.kill('SIGKILL');
    await client
      .db()
      .dropDatabase()
      .catch(() => undefined);
    await client.close();
  }
}
