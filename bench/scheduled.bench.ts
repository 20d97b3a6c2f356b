/* Scheduled events (`npm run bench -- scheduled`, issue #22). The relay runs in its own process
 * (bench/scheduled-relay.child.ts). Figures are printed; no timing is asserted, but an event
 * lost, published twice, published before its `availableAt` or left pending fails the part.
 * 1. scheduled/idle: the relay's RSS and idle CPU time with an empty outbox, then (a fresh
 *    relay process, same run) with 1 000 000 scheduled events pending, due in a day: the relay
 *    should hold nothing per not-yet-due event, so both stay within the empty outbox's figures.
 *    Default relay options (a sweep every 10 s: one falls in each window). The relay's database
 *    commands in each window are printed too (count and round-trip time by command): what the
 *    waiting events cost the database rather than the relay.
 * 2. scheduled/burst: the relay's normal drain of 10 000 immediate events (relay/drain's code),
 *    then 10 000 scheduled events written to a running relay, all due at the same instant a few
 *    seconds ahead (server time): due -> all acknowledged by Kafka and -> none pending, as rates
 *    and as a ratio to the drain; and each event's lateness (its Kafka record's timestamp, set
 *    by the producer when it sends, minus its `availableAt`), p50 / p99 / max.
 * The events are written as the write side stores them (lib/documents/outbox-event.document.ts),
 * insertMany of 10 000, with a small payload (the relay reads none of it while they wait).
 * Under `--smoke`: 10 000 pending, a burst of 500, 2 s windows. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kafka } from 'kafkajs';
import { serverTime } from '../lib/relay/mongo/relay-collections';
import { check, line, sized } from './bench-part';
import type { BenchContext, BenchPart } from './bench-part';
import type { IdleReport } from './scheduled-relay.child';
import { backlogDrain } from './relay-drain.bench';
import { behindHeldAggregate } from './scheduled-behind-held.bench';
import { benchKafka, openBenchOutbox, topicSize } from './support/bench-outbox';
import {
  burstLeadMs,
  count,
  deliveryReport,
  DONE_TIMEOUT_MS,
  insertAll,
  mb,
  percentile,
  ratio,
  readTopic,
  scheduledEvent,
  startRelay,
  untilNonePending,
} from './support/scheduled-relay';

const pendingCount = (ctx: BenchContext): number =>
  sized(ctx, 'SCHEDULED_BENCH_PENDING', 1_000_000, 10_000);
const burstSize = (ctx: BenchContext): number => sized(ctx, 'SCHEDULED_BENCH_BURST', 10_000, 500);
const idleWindowMs = (ctx: BenchContext): number =>
  sized(ctx, 'SCHEDULED_BENCH_IDLE_MS', 10_000, 2_000);
/** How long a relay is left alone after its start before a window (its start-up reads end). */
const settleMs = (ctx: BenchContext): number => (ctx.smoke ? 2_000 : 5_000);

/** The four commands that took the longest in all, e.g. `find 3x 12 ms`. */
const topCommands = (commands: IdleReport['commands']): string =>
  Object.entries(commands)
    .sort(([, a], [, b]) => b.ms - a.ms)
    .slice(0, 4)
    .map(([name, { count: n, ms }]) => `${name} ${n}x ${ms.toFixed(0)} ms`)
    .join(', ') || 'none';

/** Part 1: a relay with an empty outbox vs a relay with many scheduled events waiting. */
async function idleWithPending(ctx: BenchContext, kafka: Kafka): Promise<void> {
  const total = pendingCount(ctx);
  const window = { settleMs: settleMs(ctx), windowMs: idleWindowMs(ctx) };
  const bench = await openBenchOutbox(ctx, kafka, 'sched-idle');
  const { client, outbox, topic } = bench;
  try {
    const empty = await startRelay(bench);
    const emptyIdle = await empty.relay.request<IdleReport>({ idle: window });
    await empty.relay.stop();

    const due = new Date((await serverTime(client.db())).getTime() + 86_400_000);
    const insertSeconds = await insertAll(outbox, total, (i) => scheduledEvent(i, due));
    const full = await startRelay(bench);
    const fullIdle = await full.relay.request<IdleReport>({ idle: window });
    await full.relay.stop();

    const stillPending = await outbox.countDocuments({ status: 'pending' });
    const inKafka = await topicSize(kafka, topic);
    process.stdout.write(
      `a relay with ${count(total)} scheduled events pending, due in a day, vs an empty outbox ` +
        `(${ctx.mongoKind}; fresh relay processes, default options, idle windows of ${window.windowMs / 1000} s ` +
        `after ${window.settleMs / 1000} s):\n`,
    );
    line(
      `(outbox filled with ${count(total)} scheduled events in`,
      `${insertSeconds.toFixed(1)} s, ${(total / insertSeconds).toFixed(0)} ev/s)`,
    );
    line(
      'relay.start(): empty outbox / with them pending',
      `${(empty.startSeconds * 1000).toFixed(0)} / ${(full.startSeconds * 1000).toFixed(0)} ms`,
    );
    line(
      'RSS at the end of the window: empty / pending (ratio)',
      `${mb(emptyIdle.rss)} / ${mb(fullIdle.rss)} (${ratio(fullIdle.rss, emptyIdle.rss)})`,
    );
    line(
      'peak RSS in the window: empty / pending (ratio)',
      `${mb(emptyIdle.peakRss)} / ${mb(fullIdle.peakRss)} (${ratio(fullIdle.peakRss, emptyIdle.peakRss)})`,
    );
    line(
      'live V8 heap after a forced GC: empty / pending (ratio)',
      `${mb(emptyIdle.heapUsedAfterGc)} / ${mb(fullIdle.heapUsedAfterGc)} (${ratio(fullIdle.heapUsedAfterGc, emptyIdle.heapUsedAfterGc)})`,
    );
    const cpuShare = (r: IdleReport): string => `${((100 * r.cpuMs) / r.windowMs).toFixed(2)} %`;
    line(
      'idle CPU time in the window: empty / pending (ratio)',
      `${emptyIdle.cpuMs.toFixed(0)} / ${fullIdle.cpuMs.toFixed(0)} ms ` +
        `(${cpuShare(emptyIdle)} / ${cpuShare(fullIdle)} of a core; ${ratio(fullIdle.cpuMs, emptyIdle.cpuMs)})`,
    );
    line("the relay's database commands in the window, empty", topCommands(emptyIdle.commands));
    line('... and with them pending', topCommands(fullIdle.commands));
    line(
      'published by the relay / in Kafka; still pending',
      `${fullIdle.published} / ${inKafka}; ${count(stillPending)} of ${count(total)}`,
    );
    check(
      fullIdle.published === 0 && inKafka === 0,
      `${Math.max(fullIdle.published, inKafka)} events published a day before they were due`,
    );
    check(stillPending === total, `${total - stillPending} scheduled events left the outbox`);
  } finally {
    await bench.close();
  }
}

/** Part 2: the relay's drain rate, then a burst of scheduled events due together. */
async function dueBurst(ctx: BenchContext, kafka: Kafka): Promise<void> {
  const total = burstSize(ctx);
  const drainRate = await backlogDrain(ctx, kafka, total);

  const bench = await openBenchOutbox(ctx, kafka, 'sched-burst');
  const { client, outbox, topic } = bench;
  try {
    // The drain's stream wait (bench/relay-drain.child.ts), so the two compare.
    const { relay } = await startRelay(bench, { idleMs: 100 });
    const due = new Date((await serverTime(client.db())).getTime() + burstLeadMs(ctx));
    const ids = new Set<string>();
    const insertSeconds = await insertAll(outbox, total, (i) => {
      const event = scheduledEvent(i, due);
      ids.add(event.eventId);
      return event;
    });
    const written = await serverTime(client.db());
    if (written >= due) {
      await relay.stop();
      throw new Error(
        `the burst took ${insertSeconds.toFixed(1)} s to write and was due before it was all ` +
          `written: raise SCHEDULED_BENCH_LEAD_MS (now ${burstLeadMs(ctx)} ms)`,
      );
    }
    // Same machine: the server's clock and this process's are the same clock.
    await sleep(Math.max(0, due.getTime() - Date.now()));
    await relay.request('commands'); // from due on
    const pending = await untilNonePending(outbox);
    const markedMs = Date.now() - due.getTime();
    const commands = await relay.request<IdleReport['commands']>('commands');
    await relay.stop();
    const inKafka = await topicSize(kafka, topic);
    const deliveries = await readTopic(kafka, topic, inKafka);

    const { lost, duplicates, early, lateness } = deliveryReport(deliveries, ids, due);
    const lastAckMs = lateness.at(-1) ?? NaN;
    const ackRate = total / (lastAckMs / 1000);
    const markedRate = total / (markedMs / 1000);
    process.stdout.write(
      `a burst of ${count(total)} scheduled events due at the same instant, to a running relay ` +
        `(${ctx.mongoKind}; written ${burstLeadMs(ctx) / 1000} s ahead, in ${insertSeconds.toFixed(1)} s):\n`,
    );
    line(
      'due -> all acknowledged by Kafka (last record timestamp)',
      `${lastAckMs} ms, ${ackRate.toFixed(0)} ev/s`,
    );
    line(
      'due -> none pending (all marked published)',
      `${markedMs} ms, ${markedRate.toFixed(0)} ev/s`,
    );
    line(
      `ratio burst / drain of ${count(total)} immediate events (marked)`,
      ratio(markedRate, drainRate),
    );
    line(
      'lateness (record timestamp - availableAt)',
      `first ${lateness[0]} ms, p50 ${percentile(lateness, 50)} ms, p99 ${percentile(lateness, 99)} ms, max ${lastAckMs} ms`,
    );
    line("the relay's database commands from due to none pending", topCommands(commands));
    line(
      'lost / duplicates / published early; still pending',
      `${lost} / ${duplicates} / ${early}; ${pending}`,
    );
    check(early === 0, `${early} events published before their availableAt`);
    check(lost === 0, `${lost} events never reached Kafka`);
    check(duplicates === 0, `${duplicates} events published twice without a crash`);
    check(pending === 0, `${pending} events still pending ${DONE_TIMEOUT_MS / 1000} s after due`);
  } finally {
    await bench.close();
  }
}

export const parts: readonly BenchPart[] = [
  {
    name: 'scheduled/idle',
    needs: ['kafka', 'mongodb'],
    run: (ctx) => idleWithPending(ctx, benchKafka(ctx)),
  },
  {
    name: 'scheduled/burst',
    needs: ['kafka', 'mongodb'],
    run: (ctx) => dueBurst(ctx, benchKafka(ctx)),
  },
  {
    name: 'scheduled/behind-held',
    needs: ['kafka', 'mongodb'],
    run: (ctx) => behindHeldAggregate(ctx, benchKafka(ctx)),
  },
];
