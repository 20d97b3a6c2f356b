/* The diagnostics channels' cost on the relay core (`npm run bench -- relay`, part
 * relay/diagnostics): relay.bench.ts' relay core (RelayEngine + KafkaPublisher, no MongoDB) with
 * nobody subscribed vs a subscriber on every channel, in alternating rounds of one run, printed as a
 * ratio of the medians; and the cost of one publish helper call alone, unsubscribed and
 * subscribed. */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { OutboxEventRecord } from '../lib';
import { OUTBOX_CHANNELS } from '../lib/diagnostics';
import { outboxDiagnostics } from '../lib/diagnostics/outbox.diagnostics';
import { check, line, sized } from './bench-part';
import type { BenchContext, BenchPart } from './bench-part';
import { relayCore } from './relay.bench';
import { benchKafka, makeEvent } from './support/bench-outbox';

const BATCH = 500;
const ROUNDS = 3;

/** Subscribes `listener` to every channel; returns the unsubscribe. */
function subscribeAll(listener: (message: unknown) => void): () => void {
  const names = Object.values(OUTBOX_CHANNELS);
  for (const name of names) subscribe(name, listener);
  return () => names.forEach((name) => unsubscribe(name, listener));
}

/** ns per `relayPublished` call over a batch of `BATCH` items (the relay's one call per batch). */
function nsPerCall(items: readonly { event: OutboxEventRecord }[], calls: number): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) outboxDiagnostics.relayPublished(items);
  return Number(process.hrtime.bigint() - started) / calls;
}

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function diagnosticsOverhead(ctx: BenchContext): Promise<void> {
  const kafka = benchKafka(ctx, 'outbox-bench-diag');
  const count = sized(ctx, 'RELAY_DIAG_BENCH_EVENTS', 30_000, 2_000);
  const none: number[] = [];
  const subscribed: number[] = [];
  let seen = 0;
  for (let round = 0; round < ROUNDS; round++) {
    none.push((await relayCore(ctx, kafka, 'kafkajs', makeEvents(count))).rate);
    const stop = subscribeAll(() => seen++);
    try {
      subscribed.push((await relayCore(ctx, kafka, 'kafkajs', makeEvents(count))).rate);
    } finally {
      stop();
    }
  }
  check(seen === ROUNDS * count, `the subscriber saw ${seen} of ${ROUNDS * count} publishes`);
  const fmt = (rates: number[]) => rates.map((r) => r.toFixed(0)).join(' / ');
  line(`relay core, nobody subscribed (${ROUNDS} rounds, ev/s)`, fmt(none));
  line(`relay core, a subscriber on every channel (ev/s)`, fmt(subscribed));
  line(
    'ratio of medians, subscribed / nobody subscribed',
    (median(subscribed) / median(none)).toFixed(2),
  );

  const items = makeEvents(BATCH).map((event) => ({ event }));
  const calls = ctx.smoke ? 10_000 : 1_000_000;
  nsPerCall(items, calls); // warm-up
  const idle = nsPerCall(items, calls);
  const stop = subscribeAll(() => undefined);
  let busy: number;
  try {
    busy = nsPerCall(items, Math.max(1, calls / 1000));
  } finally {
    stop();
  }
  line(`relayPublished(${BATCH} events), nobody subscribed`, `${idle.toFixed(1)} ns per call`);
  line(
    `relayPublished(${BATCH} events), subscribed (no-op listener)`,
    `${(busy / 1000).toFixed(1)} µs per call`,
  );
}

function makeEvents(count: number): OutboxEventRecord[] {
  return Array.from({ length: count }, (_, i) => makeEvent(i));
}

export const diagnosticsPart: BenchPart = {
  name: 'relay/diagnostics',
  needs: ['kafka'],
  run: diagnosticsOverhead,
};
