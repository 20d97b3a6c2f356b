/* One relay in its own process, for bench/scheduled.bench.ts: so that the RSS and CPU time
 * measured are the relay's, not the bench's. It starts the app with the relay stopped, says
 * `{ ready: true }`, then answers the bench's requests one at a time, in order:
 *   'start'                         -> starts the relay; `{ startSeconds }`
 *   { idle: { settleMs, windowMs } } -> waits settleMs, then measures an idle window; `IdleReport`
 *   'commands'                      -> the database commands since the last request that took them
 *   'stop'                          -> closes the app and exits.
 * Env: that of bench/support/relay-child.app.ts (relay options: the defaults, and
 * RELAY_BENCH_OPTIONS).
 * Forked with --expose-gc: the live heap is read after a forced GC, once the window is over.
 * The relay's connection monitors its commands: the window also reports the database's side. */
import 'reflect-metadata';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection, mongo } from 'mongoose';
import { OutboxRelay, OutboxRelayMetrics } from '../lib';
import { ProcessWindow } from './support/process-window';
import { createRelayChildApp } from './support/relay-child.app';

export interface IdleReport {
  /** RSS at the end of the window, and the highest sampled in it (every 250 ms), bytes. */
  rss: number;
  peakRss: number;
  /** CPU time (user + system) of this process over the window, milliseconds. */
  cpuMs: number;
  windowMs: number;
  /** After the window, after a forced GC: the live V8 heap and the RSS, bytes. */
  heapUsedAfterGc: number;
  rssAfterGc: number;
  /** Events this relay published since it started (the relay's metrics). */
  published: number;
  /**
   * The relay's database commands that ended in the window (driver command monitoring), by
   * name: how many and their total round-trip time, ms. A change stream's `getMore` waits on
   * the server for new events, so its time is mostly waiting, not work.
   */
  commands: Record<string, { count: number; ms: number }>;
}

/** Command monitoring of the relay's connection: what each command cost, by name. */
class CommandTally {
  private tally: IdleReport['commands'] = {};

  constructor(client: mongo.MongoClient) {
    const note = (event: { commandName: string; duration: number }): void => {
      const entry = (this.tally[event.commandName] ??= { count: 0, ms: 0 });
      entry.count++;
      entry.ms += event.duration;
    };
    client.on('commandSucceeded', note);
    client.on('commandFailed', note);
  }

  /** What was tallied since the last call. */
  take(): IdleReport['commands'] {
    const taken = this.tally;
    this.tally = {};
    return taken;
  }
}

export type ChildRequest =
  'start' | 'stop' | 'commands' | { idle: { settleMs: number; windowMs: number } };

async function idleWindow(
  settleMs: number,
  windowMs: number,
  published: () => number,
  commands: CommandTally,
): Promise<IdleReport> {
  await sleep(settleMs);
  commands.take();
  const window = new ProcessWindow(250);
  await sleep(windowMs);
  const cpuMs = window.cpuMs();
  const windowCommands = commands.take();
  const measuredMs = window.elapsedMs();
  const atEnd = window.end();
  (globalThis as { gc?: () => void }).gc?.();
  const afterGc = process.memoryUsage();
  return {
    rss: atEnd.rss,
    peakRss: window.peak.rss,
    cpuMs,
    windowMs: measuredMs,
    heapUsedAfterGc: afterGc.heapUsed,
    rssAfterGc: afterGc.rss,
    published: published(),
    commands: windowCommands,
  };
}

async function main(): Promise<void> {
  Logger.overrideLogger(['error']);
  const app = await createRelayChildApp(['error'], {}, { monitorCommands: true });
  const relay = app.get(OutboxRelay);
  const metrics = app.get(OutboxRelayMetrics);
  const commands = new CommandTally(app.get<Connection>(getConnectionToken()).getClient());
  const answer = async (request: ChildRequest): Promise<object> => {
    if (request === 'start') {
      const started = process.hrtime.bigint();
      await relay.start();
      return { startSeconds: Number(process.hrtime.bigint() - started) / 1e9 };
    }
    if (request === 'commands') return commands.take();
    if (request === 'stop') {
      await app.close();
      process.exit(0);
    }
    const { settleMs, windowMs } = request.idle;
    return idleWindow(settleMs, windowMs, () => metrics.published, commands);
  };
  // One request at a time, answered in order.
  let queue = Promise.resolve();
  process.on('message', (request: ChildRequest) => {
    queue = queue.then(async () => {
      process.send?.(await answer(request));
    });
  });
  process.send?.({ ready: true });
}

main().catch((error) => {
  process.stderr.write(`scheduled relay child failed: ${error?.stack ?? error}\n`);
  process.exit(1);
});
