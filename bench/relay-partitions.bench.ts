/* Partitioned relays (`npm run bench -- relay`, after the single relay's figures). Every relay
 * runs in its own process with `partitions: 6`; each run first waits until the relays hold the
 * partitions evenly, so a figure is not the start-up's rebalancing.
 * 1. A burst: with 1, 2 and 3 relay processes side by side (and first one process with one
 *    partition: the cost of six streams and leases in one process), the outbox receives N events at
 *    once (insertMany, 5 000 a call) and the time until none is pending is taken, with each
 *    process's share and CPU time (where the time goes: CPU time well below the wall-clock
 *    time means the process waits, for the database or the broker; on one machine with the
 *    database and the broker, they compete for the same cores).
 * 2. The hand-over pause after a SIGKILL: 3 relays, a steady 200 ev/s, one relay killed; how
 *    long until its partitions are held again, and per partition the longest insert ->
 *    published delay after the kill (the other partitions' for comparison).
 * A lost event fails the part, and so does a duplicate in a burst (no relay dies there) unless a
 * relay reported one of the causes the guarantees name (on a loaded machine a lease can run out
 * or a mark fail): then the duplicates are printed with their causes. Under `--smoke`:
 * bursts of 1 000 events by one process with one partition and by two processes, and a shorter
 * hand-over run. */
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kafka } from 'kafkajs';
import { mongo as driver } from 'mongoose';
import type { Connection } from 'mongoose';
import { partitionOfSlot } from '../lib/relay/ports/partition-layout';
import {
  describeSpread,
  isEven,
  ownerPid,
  readSpread,
} from '../test/relay/support/partition-spread';
import { RelayChild } from './support/relay-child';
import { makeEvent, openBenchOutbox, topicSize } from './support/bench-outbox';
import type { BenchOutbox } from './support/bench-outbox';
import { check, line, sized } from './bench-part';
import type { BenchContext } from './bench-part';
import type { DuplicateCauses } from './relay-drain.child';

const PARTITIONS = 6;
/** Burst size; `RELAY_BENCH_PARTITIONED_EVENTS` overrides it. */
const burstSize = (ctx: BenchContext): number =>
  sized(ctx, 'RELAY_BENCH_PARTITIONED_EVENTS', 30_000, 1_000);
const BATCH = 500;
/** The hand-over run's lease: short enough to measure the pause quickly. */
const LEASE = { enabled: true, durationMs: 3000, renewMs: 500 };
const DRAIN_TIMEOUT_MS = 300_000;

interface Progress {
  published: number;
  cpuSeconds: number;
  causes?: DuplicateCauses;
}

const COUNTED_CAUSES = ['leasesLost', 'failedMarks', 'retried', 'outages'] as const;
const CAUSE_LABEL: Record<(typeof COUNTED_CAUSES)[number], string> = {
  leasesLost: 'partition leases lost (taken over)',
  failedMarks: 'acknowledged events whose published mark failed',
  retried: 'failed publish attempts',
  outages: 'broker outages',
};

/** The causes the relays reported since `before` (per process), summed; undefined when none. */
function causesSince(
  relays: RelayProcess[],
  before: Array<Progress['causes']>,
): string | undefined {
  const named = COUNTED_CAUSES.map((cause) => {
    const n = relays.reduce(
      (sum, r, i) => sum + (r.progress.causes?.[cause] ?? 0) - (before[i]?.[cause] ?? 0),
      0,
    );
    return n > 0 ? `${n} ${CAUSE_LABEL[cause]}` : undefined;
  }).filter(Boolean);
  return named.length > 0 ? named.join(', ') : undefined;
}

/** A relay process (bench/relay-drain.child.ts with BENCH_SHARED and BENCH_STAY). */
interface RelayProcess {
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<unknown>;
  progress: Progress;
}

function forkRelay(bench: BenchOutbox, options: object): RelayProcess {
  const relay = new RelayChild('relay-drain', {
    mongoUri: bench.mongoUri,
    prefix: bench.prefix,
    batch: BATCH,
    relayOptions: { partitions: PARTITIONS, ...options },
    env: { BENCH_EVENTS: '0', BENCH_SHARED: '1', BENCH_STAY: '1' },
  });
  const state: RelayProcess = {
    child: relay.process,
    ready: relay.next<void>(),
    exited: relay.exited,
    progress: { published: 0, cpuSeconds: 0 },
  };
  relay.process.on('message', (message: { progress?: boolean } & Progress) => {
    if (message.progress) state.progress = message;
  });
  state.ready.catch(() => undefined);
  return state;
}

/** Starts `count` relay processes and waits until they hold the partitions evenly. */
async function startRelays(
  bench: BenchOutbox,
  count: number,
  options: object,
  connection: Connection,
): Promise<RelayProcess[]> {
  const relays = Array.from({ length: count }, () => forkRelay(bench, options));
  await Promise.all(relays.map((r) => r.ready));
  for (const r of relays) r.child.send('go');
  await waitEven(connection, relays);
  return relays;
}

const alive = (relays: RelayProcess[]): number[] =>
  relays.filter((r) => r.child.exitCode === null && !r.child.killed).map((r) => r.child.pid!);

async function waitEven(connection: Connection, relays: RelayProcess[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!isEven(await readSpread(connection), alive(relays))) {
    if (Date.now() > deadline) throw new Error('the partitions were not spread evenly in 60 s');
    await sleep(50);
  }
}

async function stopRelays(relays: RelayProcess[]): Promise<void> {
  for (const r of relays) r.child.kill('SIGTERM');
  await Promise.all(relays.map((r) => Promise.race([r.exited, sleep(10_000)])));
  for (const r of relays) r.child.kill('SIGKILL');
}

/** Until no event is pending; fails the part when some still are after `DRAIN_TIMEOUT_MS`. */
async function waitDrained(outbox: driver.Collection): Promise<void> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  for (;;) {
    const pending = await outbox.countDocuments({ status: 'pending' });
    if (pending === 0) return;
    check(Date.now() < deadline, `${pending} events still pending after ${DRAIN_TIMEOUT_MS} ms`);
    await sleep(50);
  }
}

/** One burst of `events` drained by `count` relay processes. */
async function burst(
  ctx: BenchContext,
  kafka: Kafka,
  count: number,
  events: number,
  partitions: number,
): Promise<void> {
  const bench = await openBenchOutbox(ctx, kafka, 'parts');
  const { outbox, topic } = bench;
  const connection = { db: bench.client.db() } as unknown as Connection;
  let relays: RelayProcess[] = [];
  try {
    relays = await startRelays(bench, count, { partitions }, connection);
    const cpuBefore = relays.map((r) => r.progress.cpuSeconds);
    const causesBefore = relays.map((r) => r.progress.causes);
    const started = Date.now();
    for (let i = 0; i < events; i += 5000) {
      const n = Math.min(5000, events - i);
      await outbox.insertMany(Array.from({ length: n }, (_, k) => makeEvent(i + k)) as never[]);
    }
    const written = (Date.now() - started) / 1000;
    await waitDrained(outbox);
    const seconds = (Date.now() - started) / 1000;
    await sleep(400); // the last progress reports
    const inKafka = await topicSize(kafka, topic);
    line(
      `${count} relay process${count > 1 ? 'es' : ''}, ${partitions} partition${partitions > 1 ? 's' : ''}`,
      `${(events / seconds).toFixed(0)} ev/s (${seconds.toFixed(1)} s, written in ${written.toFixed(1)} s); ` +
        `published per process ${relays.map((r) => r.progress.published).join(' / ')}; ` +
        `CPU per process ${relays.map((r, i) => `${(r.progress.cpuSeconds - cpuBefore[i]).toFixed(1)} s`).join(' / ')}; ` +
        `${inKafka - events} duplicates`,
    );
    check(inKafka >= events, `${events - inKafka} events never reached Kafka`);
    if (inKafka > events) {
      const causes = causesSince(relays, causesBefore);
      check(
        causes !== undefined,
        `${inKafka - events} events published twice, and no relay reported a cause (no lease lost, no failed mark, no broker error)`,
      );
      line(`... ${inKafka - events} duplicates, the relays reported`, causes as string);
      for (const [i, r] of relays.entries()) {
        for (const message of r.progress.causes?.messages ?? [])
          line(`... relay ${i + 1}`, message);
      }
    }
  } finally {
    await stopRelays(relays);
    await bench.close();
  }
}

export async function partitionedDrain(ctx: BenchContext, kafka: Kafka): Promise<void> {
  const events = burstSize(ctx);
  process.stdout.write(
    `partitioned relays draining a burst of ${events} events (${ctx.mongoKind}; each relay in its own process, ` +
      `${PARTITIONS} partitions (and one process with one, for comparison), spread evenly before the burst; the database and Kafka on this machine):\n`,
  );
  // First one process with one partition (one change stream, the single lease): what the
  // partitions themselves cost one process (six streams, six leases) before they are spread.
  const runs = ctx.smoke
    ? [
        [1, 1],
        [2, PARTITIONS],
      ]
    : [
        [1, 1],
        [1, PARTITIONS],
        [2, PARTITIONS],
        [3, PARTITIONS],
      ];
  for (const [count, partitions] of runs) await burst(ctx, kafka, count, events, partitions);
}

/** The hand-over pause after a SIGKILL, under a steady stream of events. */
export async function handOverPause(ctx: BenchContext, kafka: Kafka): Promise<void> {
  const bench = await openBenchOutbox(ctx, kafka, 'handover');
  const { outbox, topic } = bench;
  const connection = { db: bench.client.db() } as unknown as Connection;
  let relays: RelayProcess[] = [];
  let writing = true;
  const inserted = new Map<string, number>();
  let writer: Promise<void> = Promise.resolve();
  try {
    relays = await startRelays(bench, 3, { lease: LEASE }, connection);
    let n = 0;
    writer = (async () => {
      while (writing) {
        const batch = Array.from({ length: 10 }, () => makeEvent(n++));
        const at = Date.now();
        await outbox.insertMany(batch as never[]);
        for (const e of batch) inserted.set(e.eventId, at);
        await sleep(50);
      }
    })();
    await sleep(3000);
    const before = await readSpread(connection);
    const victim = relays[0];
    const victimPartitions =
      [...before.byOwner].find(([owner]) => ownerPid(owner) === victim.child.pid)?.[1] ?? [];
    const killedAt = Date.now();
    victim.child.kill('SIGKILL');
    await victim.exited;
    await waitEven(connection, relays);
    const heldAgainMs = Date.now() - killedAt;
    const spread = describeSpread(await readSpread(connection));
    await sleep(ctx.smoke ? 2000 : 5000);
    writing = false;
    await writer;
    await waitDrained(outbox);
    const inKafka = await topicSize(kafka, topic);
    const docs = await outbox
      .find({}, { projection: { eventId: 1, slot: 1, publishedAt: 1 } })
      .toArray();
    const longest = new Array<number>(PARTITIONS).fill(0);
    const steady = new Array<number>(PARTITIONS).fill(0);
    for (const doc of docs) {
      const at = inserted.get(doc.eventId as string);
      if (at === undefined) continue;
      const delay = (doc.publishedAt as Date).getTime() - at;
      const p = partitionOfSlot(doc.slot as number, PARTITIONS);
      if (at >= killedAt) longest[p] = Math.max(longest[p], delay);
      else steady[p] = Math.max(steady[p], delay);
    }
    const show = (list: number[], of: (p: number) => boolean) =>
      list
        .map((ms, p) => (of(p) ? `p${p} ${ms}` : undefined))
        .filter(Boolean)
        .join(', ') + ' ms';
    const victims = (p: number) => victimPartitions.includes(p);
    process.stdout.write(
      `hand-over after a SIGKILL (3 relays, ${PARTITIONS} partitions, lease ${LEASE.durationMs} ms, renew ${LEASE.renewMs} ms, 200 ev/s):\n`,
    );
    line(
      `kill -> partitions [${victimPartitions.join(',')}] held again`,
      `${heldAgainMs} ms (${spread})`,
    );
    line('longest insert -> published after the kill, its partitions', show(longest, victims));
    line(
      '... the other partitions',
      show(longest, (p) => !victims(p)),
    );
    line(
      '... events inserted in the 3 s before the kill',
      show(steady, () => true),
    );
    line(
      'messages in Kafka / events inserted',
      `${inKafka} / ${inserted.size} (${inKafka - inserted.size} duplicates after the kill)`,
    );
    check(inKafka >= inserted.size, `${inserted.size - inKafka} events never reached Kafka`);
  } finally {
    writing = false;
    await writer.catch(() => undefined);
    await stopRelays(relays);
    await bench.close();
  }
}
