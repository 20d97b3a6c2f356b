/* One relay in its own process, for bench/tenants.bench.ts: so that the RSS and CPU time measured
 * are the relay's, not the bench's. With BENCH_TENANT_DATABASES (a JSON list of database names)
 * it is one relay over those tenant databases (`tenants: { databases, stream }`, BENCH_TENANT_STREAM
 * `cluster` or `per-database`); without it, a single-database relay on MONGODB_URI's database (the
 * baseline). It starts the app with the relay stopped, says `{ ready: true }`, then answers the
 * bench's requests one at a time, in order:
 *   'start'                  -> starts the relay and waits until it follows every database; `StartReport`
 *   { idle: { windowMs } }   -> an idle window (CPU time), then a forced GC; `IdleReport`
 *   'measure'                -> opens the measurement window; `{ armed: true }`
 *   'end'                    -> closes it; `WindowReport`
 *   'stop'                   -> closes the app and exits.
 * Env: that of bench/support/relay-child.app.ts (relay options: the defaults, RELAY_BENCH_OPTIONS);
 * BENCH_START_TIMEOUT_MS (default 600 000): a start-up longer than that exits, saying how far it
 * got; RELAY_BENCH_LOG=warn (or log) prints the relay's own messages as well (default: errors).
 * Forked with --expose-gc: the idle memory is read after a forced GC. */
import 'reflect-metadata';
import { subscribe } from 'node:diagnostics_channel';
import { setTimeout as sleep } from 'node:timers/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import { Logger } from '@nestjs/common';
import { OUTBOX_CHANNELS, OutboxRelay, OutboxRelayMetrics } from '../lib';
import type { RelayLeaseLostMessage, RelayStatus } from '../lib';
import { ProcessWindow } from './support/process-window';
import { createRelayChildApp, logLevels } from './support/relay-child.app';

/**
 * How often the start-up polls `status()`, ms. Not more often: at 1 000 databases each call lists
 * and sorts all of them; polled every 20 ms, the probe itself took about 2 s of the start-up's
 * CPU and grew the heap V8 then keeps (reserved 87-91 MB against 56 MB, in the same process).
 */
const START_POLL_MS = 250;

export interface StartReport {
  /** From `relay.start()` until `status()` shows every database followed, stream `following`
   *  (polled every `START_POLL_MS`). */
  startSeconds: number;
  /** CPU time of this process over the same time, seconds. */
  startCpuSeconds: number;
  followed: number;
}

export interface IdleReport {
  /** After the window, after a forced GC: the RSS, the V8 heap reserved and live, and the
   *  memory outside it (Buffers), bytes. */
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  /** V8's young generation and old space as reserved, bytes (`v8.getHeapSpaceStatistics`). */
  newSpace: number;
  oldSpace: number;
  /** CPU time (user + system) over the idle window, and the window, ms. */
  cpuMs: number;
  windowMs: number;
}

/** Each time this relay's leadership ended other than by its own stop (the relay's reason). */
export const leadershipLost: string[] = [];

export interface WindowReport {
  /** Why leadership ended, each time it did since the relay started (not a graceful stop). */
  leadershipLost: string[];
  /** CPU time (user + system) of this process over the window, and the window, ms. */
  cpuMs: number;
  elapsedMs: number;
  /** Events this relay published (acknowledged by Kafka) in the window. */
  published: number;
  peakRss: number;
}

export type TenantsChildRequest =
  'start' | 'measure' | 'end' | 'stop' | { idle: { windowMs: number } };

function spaceSize(name: string): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === name)?.space_size ?? 0;
}

/** How many databases `status` shows followed with their stream following (the baseline: 0 or 1). */
function followedIn(status: RelayStatus, tenants: boolean): number {
  if (status.role !== 'leader') return 0;
  if (!tenants) return status.stream === 'following' ? 1 : 0;
  return (status.tenants ?? []).filter(
    (one) => one.state === 'followed' && one.stream === 'following',
  ).length;
}

async function main(): Promise<void> {
  subscribe(OUTBOX_CHANNELS.relayLeaseLost, (message) => {
    const lost = message as RelayLeaseLostMessage;
    if (!lost.released) leadershipLost.push(lost.reason);
  });
  const levels = logLevels(process.env.RELAY_BENCH_LOG);
  Logger.overrideLogger(levels);
  const listed = process.env.BENCH_TENANT_DATABASES;
  const databases = listed ? (JSON.parse(listed) as string[]) : undefined;
  const stream = (process.env.BENCH_TENANT_STREAM ?? 'cluster') as 'cluster' | 'per-database';
  const app = await createRelayChildApp(levels, {}, {}, databases && { databases, stream });
  const relay = app.get(OutboxRelay);
  const metrics = app.get(OutboxRelayMetrics);
  const gc = (globalThis as { gc?: () => void }).gc;
  const expected = databases?.length ?? 1;
  let window: ProcessWindow | undefined;
  let publishedAtStart = 0;

  const answer = async (request: TenantsChildRequest): Promise<object> => {
    if (request === 'start') {
      const started = new ProcessWindow(1000);
      await relay.start();
      const limitMs = Number(process.env.BENCH_START_TIMEOUT_MS ?? 600_000);
      while (followedIn(relay.status(), Boolean(databases)) < expected) {
        if (started.elapsedMs() > limitMs) {
          const status = relay.status();
          throw new Error(
            `start-up: ${followedIn(status, Boolean(databases))} of ${expected} databases followed after ${limitMs / 1000} s (role ${status.role}, stream ${status.stream}${status.streamError ? `: ${status.streamError}` : ''})`,
          );
        }
        await sleep(START_POLL_MS);
      }
      started.end();
      const report: StartReport = {
        startSeconds: started.elapsedMs() / 1000,
        startCpuSeconds: started.cpuMs() / 1000,
        followed: followedIn(relay.status(), Boolean(databases)),
      };
      return report;
    }
    if (request === 'measure') {
      publishedAtStart = metrics.published;
      window = new ProcessWindow(50);
      return { armed: true };
    }
    if (request === 'end') {
      const open = window as ProcessWindow;
      const cpuMs = open.cpuMs();
      const elapsedMs = open.elapsedMs();
      open.end();
      const report: WindowReport = {
        cpuMs,
        elapsedMs,
        published: metrics.published - publishedAtStart,
        peakRss: open.peak.rss,
        leadershipLost,
      };
      return report;
    }
    if (request === 'stop') {
      await app.close();
      process.exit(0);
    }
    const idle = new ProcessWindow(1000);
    await sleep(request.idle.windowMs);
    const cpuMs = idle.cpuMs();
    const windowMs = idle.elapsedMs();
    idle.end();
    gc?.();
    const usage = process.memoryUsage();
    const report: IdleReport = {
      rss: usage.rss,
      heapTotal: usage.heapTotal,
      heapUsed: usage.heapUsed,
      external: usage.external,
      newSpace: spaceSize('new_space'),
      oldSpace: spaceSize('old_space'),
      cpuMs,
      windowMs,
    };
    return report;
  };
  // One request at a time, answered in order.
  let queue = Promise.resolve();
  process.on('message', (request: TenantsChildRequest) => {
    queue = queue
      .then(async () => {
        process.send?.(await answer(request));
      })
      .catch((error: unknown) => {
        // The bench's RelayChild reports the error line of this output when the process exits.
        process.stderr.write(`tenants relay child: Error: ${(error as Error).message}\n`);
        process.exit(1);
      });
  });
  process.send?.({ ready: true });
}

main().catch((error) => {
  process.stderr.write(`tenants relay child failed: ${error?.stack ?? error}\n`);
  process.exit(1);
});
