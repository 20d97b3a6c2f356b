/* The relay alone in its own process, for the backlog-drain bench (forked by relay.bench.ts):
 * so that its peak RSS is the relay's, not the bench's. It starts the app with the relay
 * stopped, starts it, and reports over IPC when every event of the backlog was acknowledged
 * by Kafka and marked published. Env: that of bench/support/relay-child.app.ts (relay options:
 * `idleMs: 100`, and RELAY_BENCH_OPTIONS), BENCH_EVENTS and RELAY_BENCH_TRACE (print memory
 * each second, after a forced GC: the live heap). Run with `--expose-gc`: it forces a GC before
 * the relay starts (the idle figures) and three times while it drains (the live heap, see
 * `DrainReport.live`); the RSS peak is sampled every 50 ms without one.
 * With BENCH_SHARED=1 (one of several relay processes sharing the outbox's partitions) it reports
 * `{ ready: true }` once the app started, starts the relay on the message 'go', and is done
 * when no event is pending any more (what it published itself is in `published`); with
 * BENCH_STAY=1 as well, it relays until it is killed and reports
 * `{ progress: true, published, cpuSeconds, causes }` every 200 ms: `causes` are what the relay
 * reported that the guarantees name as a cause of a duplicate (see `DuplicateCauses`).
 * RELAY_BENCH_LOG=warn (or log) prints the relay's own messages as well (default: errors only). */
import 'reflect-metadata';
import { subscribe } from 'node:diagnostics_channel';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConsoleLogger, Logger } from '@nestjs/common';
import type { LogLevel } from '@nestjs/common';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import { OUTBOX_CHANNELS, OutboxRelay, OutboxRelayMetrics } from '../lib';
import type { RelayLeaseLostMessage } from '../lib';
import { ProcessWindow } from './support/process-window';
import { createRelayChildApp, logLevels } from './support/relay-child.app';

/**
 * What this process's relay reported that docs/guarantees.md names as a cause of a second
 * publication: leadership of a partition lost (not released: its lease ran out or it was fenced
 * off, so another relay took its events over), acknowledged events whose published mark could
 * not be written, failed publish attempts (an ambiguous acknowledgement or a partial failure may
 * have stored them) and broker outages.
 */
export interface DuplicateCauses {
  leasesLost: number;
  failedMarks: number;
  retried: number;
  outages: number;
  /** The first of the relay's warnings and errors, for the report. */
  messages: string[];
}

/** Nest's console logger, that also notes the relay's warnings that name a cause. */
class CauseLogger extends ConsoleLogger {
  constructor(
    private readonly causes: DuplicateCauses,
    levels: LogLevel[],
  ) {
    super();
    this.setLogLevels(levels);
  }

  override warn(message: unknown, ...rest: unknown[]): void {
    this.note(message);
    if (this.isLevelEnabled('warn')) super.warn(message, ...rest);
  }

  override error(message: unknown, ...rest: unknown[]): void {
    this.note(message);
    if (this.isLevelEnabled('error')) super.error(message, ...rest);
  }

  private note(message: unknown): void {
    const text = String(message);
    const marks = /Could not mark (\d+) acknowledged events published/.exec(text);
    if (marks) this.causes.failedMarks += Number(marks[1]);
    if (this.causes.messages.length < 5) this.causes.messages.push(text.slice(0, 300));
  }
}

/** One forced-GC sample (`--expose-gc`, which changes nothing else): what is alive, bytes. */
export interface LiveSample {
  rss: number;
  /** V8 heap reserved (what the heap takes of the RSS) and in use (alive, after the GC). */
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  /** What the relay's budget counts as held then (`status().inFlight`). */
  relayBytes: number;
  relayEvents: number;
}

export interface DrainReport {
  /** RSS after the app started, before the relay did, after a forced GC (bytes). */
  baseRss: number;
  /** The same moment, all of it. */
  idle: LiveSample;
  peakRss: number;
  /** The sample of the highest RSS, all of it (heap reserved and used, outside the heap). */
  atPeak: NodeJS.MemoryUsage;
  /**
   * The largest live heap of three forced-GC samples, when a quarter, half and three quarters
   * of the backlog was acknowledged (the relay then holds what its bound lets it).
   */
  live?: LiveSample;
  /** Peak V8 heap in use, and peak memory outside it (Buffers, ArrayBuffers), bytes. */
  peakHeapUsed: number;
  peakExternal: number;
  /** From `relay.start()` until Kafka acknowledged the whole backlog (the metrics count acks). */
  ackedSeconds: number;
  /** Until, in addition, no event of the backlog is pending any more. */
  markedSeconds: number;
  published: number;
  /** CPU time of this process (user + system) from `relay.start()` to the end, seconds. */
  cpuSeconds: number;
  /** What the relay reported that can cause a second publication (a duplicate's explanation). */
  causes: DuplicateCauses;
}

async function main(): Promise<void> {
  const causes: DuplicateCauses = {
    leasesLost: 0,
    failedMarks: 0,
    retried: 0,
    outages: 0,
    messages: [],
  };
  subscribe(OUTBOX_CHANNELS.relayLeaseLost, (message) => {
    const lost = message as RelayLeaseLostMessage;
    if (lost.released) return;
    causes.leasesLost++;
    if (causes.messages.length < 5) causes.messages.push(`lease lost: ${lost.reason}`);
  });
  const logger = new CauseLogger(causes, logLevels(process.env.RELAY_BENCH_LOG));
  Logger.overrideLogger(logger);
  const events = Number(process.env.BENCH_EVENTS);
  const app = await createRelayChildApp(logger, { idleMs: 100 });
  const relay = app.get(OutboxRelay);
  const metrics = app.get(OutboxRelayMetrics);
  const outbox = app.get<Connection>(getConnectionToken()).collection('outbox');
  const gc = (globalThis as { gc?: () => void }).gc;
  const liveSample = (): LiveSample => {
    gc?.();
    const usage = process.memoryUsage();
    const { inFlight } = relay.status();
    return {
      ...{ rss: usage.rss, heapTotal: usage.heapTotal, heapUsed: usage.heapUsed },
      external: usage.external,
      ...{ arrayBuffers: usage.arrayBuffers, relayBytes: inFlight.bytes },
      relayEvents: inFlight.events,
    };
  };
  const idle = liveSample();
  const baseRss = idle.rss;
  const trace = Boolean(process.env.RELAY_BENCH_TRACE);
  // Traced: each second, after a forced GC (the live heap), printed.
  const traced = (): NodeJS.MemoryUsage => {
    gc?.();
    const usage = process.memoryUsage();
    process.stderr.write(
      `rss ${usage.rss >> 20} heapTotal ${usage.heapTotal >> 20} heapUsed ${usage.heapUsed >> 20} external ${usage.external >> 20} ab ${usage.arrayBuffers >> 20} published ${metrics.published}\n`,
    );
    return usage;
  };
  const shared = process.env.BENCH_SHARED === '1';
  if (shared) {
    const go = new Promise<void>((resolve) => process.once('message', () => resolve()));
    process.send?.({ ready: true });
    await go;
  }
  const window = trace ? new ProcessWindow(1000, traced) : new ProcessWindow(50);
  await relay.start();
  // BENCH_STAY=1: relays until it is killed, reporting its count and CPU time as it goes.
  if (process.env.BENCH_STAY === '1') {
    setInterval(() => {
      process.send?.({
        progress: true,
        published: metrics.published,
        cpuSeconds: window.cpuMs() / 1000,
        causes: { ...causes, retried: metrics.retried, outages: metrics.outages },
      });
    }, 200);
    await new Promise(() => undefined);
  }
  let live: LiveSample | undefined;
  const checkpoints = [0.25, 0.5, 0.75].map((share) => Math.floor(events * share));
  if (!shared)
    while (metrics.published < events) {
      if (checkpoints.length > 0 && metrics.published >= checkpoints[0]) {
        checkpoints.shift();
        const sample = liveSample();
        if (!live || sample.heapUsed > live.heapUsed) live = sample;
      }
      await sleep(10);
    }
  const ackedSeconds = window.elapsedMs() / 1000;
  // Shared: polled less often, by every process.
  while ((await outbox.countDocuments({ status: 'pending' })) > 0) await sleep(shared ? 100 : 10);
  const markedSeconds = window.elapsedMs() / 1000;
  window.end();
  const report: DrainReport = {
    baseRss,
    idle,
    peakRss: Math.max(baseRss, window.peak.rss),
    atPeak: window.peakUsage ?? process.memoryUsage(),
    live,
    peakHeapUsed: window.peak.heapUsed,
    peakExternal: window.peak.external,
    ackedSeconds,
    markedSeconds,
    published: metrics.published,
    cpuSeconds: window.cpuMs() / 1000,
    causes: { ...causes, retried: metrics.retried, outages: metrics.outages },
  };
  await app.close();
  process.send?.(report, () => process.exit(0));
}

main().catch((error) => {
  process.stderr.write(`relay drain child failed: ${error?.stack ?? error}\n`);
  process.exit(1);
});
