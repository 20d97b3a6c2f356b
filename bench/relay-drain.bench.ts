/* The relay, in its own process (bench/relay-drain.child.ts), draining a pre-filled outbox into
 * Kafka (`relay/drain` of `npm run bench -- relay`): its rate, that Kafka holds each event exactly
 * once, and the process's memory beside the bound it was given (`maxInFlightBytes`): RSS idle,
 * at its peak and over idle, what the peak sample was made of (V8 heap reserved and used, memory
 * outside the heap), and the live heap while it drains (after a forced GC) with what the relay's
 * budget counted then. At 30 000 and 100 000 events (`RELAY_BENCH_EVENTS` sets one size; 2 000
 * under `--smoke`); RELAY_BENCH_OPTIONS (JSON) sets relay options, e.g. `maxInFlightBytes`.
 * The largest size is drained a second time with V8's heap bounded (`HEAP_BOUNDED`): what the
 * RSS over idle is without the garbage a default-sized heap lets build up between collections. */
import type { Kafka } from 'kafkajs';
import { RELAY_DEFAULTS } from '../lib/relay/relay.options';
import type { DrainReport } from './relay-drain.child';
import { check, line } from './bench-part';
import type { BenchContext } from './bench-part';
import { RelayChild } from './support/relay-child';
import { makeEvent, openBenchOutbox, topicSize } from './support/bench-outbox';
import type { BenchOutbox } from './support/bench-outbox';

const BATCH = 500;
/** The goal of issue #32: RSS over idle at most `maxInFlightBytes` + this. */
const ALLOWANCE = 16 * 1024 * 1024;

/**
 * Node flags that bound V8's heap (young generation 2 MB a semi-space, old generation 64 MB):
 * the drain's live heap is about 25 MB, so they only make V8 collect sooner.
 */
export const HEAP_BOUNDED = '--max-semi-space-size=2 --max-old-space-size=64';

/** The backlog sizes of one run. */
export function drainSizes(ctx: BenchContext): number[] {
  const set = process.env.RELAY_BENCH_EVENTS;
  if (set) return [Number(set)];
  return ctx.smoke ? [2_000] : [30_000, 100_000];
}

/** The relay of bench/relay-drain.child.ts draining `events`: its report, once it is done. */
async function drainInChild(
  bench: BenchOutbox,
  events: number,
  nodeOptions: string | undefined,
): Promise<DrainReport> {
  const child = new RelayChild('relay-drain', {
    mongoUri: bench.mongoUri,
    prefix: bench.prefix,
    batch: BATCH,
    env: { BENCH_EVENTS: String(events) },
    // Only exposes `gc()`: the heap's sizing and collection are Node's defaults.
    execArgv: ['--expose-gc'],
    nodeOptions,
    echoStderr: true,
  });
  const report = await child.next<DrainReport>();
  await child.exited;
  return report;
}

const mb = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MB`;

/** The in-flight bounds the child's relay runs with (its defaults, then RELAY_BENCH_OPTIONS). */
function bounds(): { maxInFlight: number; maxInFlightBytes: number } {
  const set = JSON.parse(process.env.RELAY_BENCH_OPTIONS ?? '{}') as Record<string, number>;
  return {
    maxInFlight: set.maxInFlight ?? RELAY_DEFAULTS.maxInFlight,
    maxInFlightBytes: set.maxInFlightBytes ?? RELAY_DEFAULTS.maxInFlightBytes,
  };
}

function memoryLines(report: DrainReport): void {
  const { maxInFlight, maxInFlightBytes } = bounds();
  const over = report.peakRss - report.baseRss;
  const { atPeak, idle, live } = report;
  line('bounds: maxInFlight / maxInFlightBytes', `${maxInFlight} / ${mb(maxInFlightBytes)}`);
  line(
    'RSS idle (app started, after a forced GC) / peak',
    `${mb(idle.rss)} / ${mb(report.peakRss)}`,
  );
  line(
    'RSS over idle, against maxInFlightBytes + 16 MB',
    `${mb(over)} vs ${mb(maxInFlightBytes + ALLOWANCE)}: ${over <= maxInFlightBytes + ALLOWANCE ? 'met' : 'NOT met'}`,
  );
  line(
    '  at the RSS peak: heap reserved / used (with garbage)',
    `${mb(atPeak.heapTotal)} / ${mb(atPeak.heapUsed)} (idle: ${mb(idle.heapTotal)} / ${mb(idle.heapUsed)})`,
  );
  line(
    '  at the RSS peak: external / of it arrayBuffers',
    `${mb(atPeak.external)} / ${mb(atPeak.arrayBuffers)} (idle: ${mb(idle.external)} / ${mb(idle.arrayBuffers)})`,
  );
  if (!live) return;
  line(
    'live while draining (forced GC): heap / external over idle',
    `${mb(live.heapUsed - idle.heapUsed)} / ${mb(live.external - idle.external)} (RSS then ${mb(live.rss)})`,
  );
  line(
    "  the relay's budget then: bytes / events held",
    `${mb(live.relayBytes)} / ${live.relayEvents}`,
  );
}

/**
 * The relay (its own process) draining a pre-filled outbox of `events` into Kafka; ev/s marked.
 * `nodeOptions`: the child's NODE_OPTIONS (default RELAY_BENCH_NODE_OPTIONS).
 */
export async function backlogDrain(
  ctx: BenchContext,
  kafka: Kafka,
  events: number,
  nodeOptions = process.env.RELAY_BENCH_NODE_OPTIONS,
): Promise<number> {
  const bench = await openBenchOutbox(ctx, kafka, 'relay');
  const { outbox, topic } = bench;
  const fillStarted = Date.now();
  for (let i = 0; i < events; i += 5000) {
    const n = Math.min(5000, events - i);
    await outbox.insertMany(Array.from({ length: n }, (_, k) => makeEvent(i + k)) as never[]);
  }
  process.stdout.write(
    `  (outbox pre-filled with ${events} pending events in ${((Date.now() - fillStarted) / 1000).toFixed(1)} s)\n`,
  );
  const report = await drainInChild(bench, events, nodeOptions);
  const inKafka = await topicSize(kafka, topic);
  const pending = await outbox.countDocuments({ status: 'pending' });
  await bench.close();
  const rate = events / report.markedSeconds;
  process.stdout.write(
    `relay draining a pre-filled outbox of ${events} (${ctx.mongoKind}, relay in its own process${nodeOptions ? `, ${nodeOptions}` : ''}):\n`,
  );
  line(
    `relay.start() -> ${events} events acked by Kafka`,
    `${(events / report.ackedSeconds).toFixed(0)} ev/s (${report.ackedSeconds.toFixed(1)} s)`,
  );
  line(
    '... and all of them marked published in the outbox',
    `${rate.toFixed(0)} ev/s (${report.markedSeconds.toFixed(1)} s)`,
  );
  line(
    'messages in Kafka / events; still pending afterwards',
    `${inKafka} / ${events} (${inKafka - events} duplicates); ${pending} pending`,
  );
  if (inKafka > events) {
    const { messages, ...counts } = report.causes;
    line('... the relay reported (causes of a second publication)', JSON.stringify(counts));
    for (const message of messages) line('  ', message);
  }
  memoryLines(report);
  // One relay, no crash, no outage: each event exactly once (DESIGN, invariant 5).
  check(inKafka >= events, `${events - inKafka} events never reached Kafka`);
  check(inKafka === events, `${inKafka - events} events published twice without a crash`);
  check(pending === 0, `${pending} events still pending after the drain`);
  return rate;
}
