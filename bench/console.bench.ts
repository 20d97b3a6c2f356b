/* The outbox console's overview: server time to first byte with a large backlog pending.
 * `npm run bench -- console` (100,000 pending events; `--smoke`: 2,000; OUTBOX_BENCH_CONSOLE_PENDING
 * sets it). The app runs without a relay (the backlog stays pending) and with the relay's indexes
 * the overview reads (`outbox_relay_status_due`, `outbox_relay_scheduled`), as a relay creates them.
 * The overview's cost is its capped counts (each reads up to `countLimit` index entries), so the
 * same backlog is measured with the default `countLimit` and with a tenth of it, and one capped
 * count is timed alone: which share of the time is the counts, on the server at hand. */
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MongooseModule, getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import { randomUUID } from 'node:crypto';
import { OutboxModule } from '../lib';
import { OutboxConsoleModule } from '../lib/console';
import { cappedCount } from '../lib/console/reads/capped-count';
import { PUBLISHABLE_NOW, RELAY_OUTBOX_INDEXES } from '../lib/documents/outbox-event.document';
import { check, line, sized, type BenchContext, type BenchPart } from './bench-part';

const REQUESTS = 30;
const DEFAULT_COUNT_LIMIT = 10_000;

function databaseUri(uri: string, db: string): string {
  const url = new URL(uri);
  url.pathname = `/${db}`;
  return url.toString();
}

async function consoleApp(uri: string, countLimit: number) {
  @Module({
    imports: [
      MongooseModule.forRoot(uri),
      OutboxModule.forRoot({ relay: false }),
      OutboxConsoleModule.forRoot({ authorize: () => 'bench', countLimit }),
    ],
  })
  class ConsoleBenchApp {}
  const app = await NestFactory.create(ConsoleBenchApp, { logger: false });
  await app.listen(0, '127.0.0.1');
  return app;
}

async function writeBacklog(db: Connection, pending: number): Promise<void> {
  const outbox = db.collection('outbox');
  for (const { key, ...options } of [
    RELAY_OUTBOX_INDEXES.statusDue,
    RELAY_OUTBOX_INDEXES.scheduled,
  ]) {
    await outbox.createIndex(key, options);
  }
  const started = Date.now();
  for (let written = 0; written < pending; written += 5_000) {
    const n = Math.min(5_000, pending - written);
    await outbox.insertMany(
      Array.from({ length: n }, (_, i) => ({
        eventId: randomUUID(),
        eventType: 'OrderCreated',
        aggregateType: 'Order',
        aggregateId: `o-${(written + i) % 1000}`,
        payload: { n: written + i },
        occurredAt: new Date(),
        status: 'pending',
        attempts: 0,
      })),
      { ordered: false },
    );
  }
  line(
    `pending events written (relay off)`,
    `${pending.toLocaleString('en-US')} in ${Date.now() - started} ms`,
  );
}

/** Median / p95 / max of `REQUESTS` timed requests, after three that warm the pool and the JIT. */
async function timeOverview(url: string): Promise<string> {
  const times: number[] = [];
  for (let i = 0; i < REQUESTS + 3; i++) {
    const t0 = process.hrtime.bigint();
    const response = await fetch(url); // resolves at the response's headers: the first byte
    const ttfb = Number(process.hrtime.bigint() - t0) / 1e6;
    const body = await response.text();
    check(response.status === 200, `overview answered ${response.status}`);
    check(body.includes('data-metric="pending"'), 'overview without its pending count');
    if (i >= 3) times.push(ttfb);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) =>
    times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(1);
  return `${at(0.5)} / ${at(0.95)} / ${times.at(-1)!.toFixed(1)} ms`;
}

async function timeOneCount(db: Connection): Promise<void> {
  const t0 = process.hrtime.bigint();
  await cappedCount(db.collection('outbox'), PUBLISHABLE_NOW, DEFAULT_COUNT_LIMIT);
  line(
    `one capped count alone (pending, up to ${DEFAULT_COUNT_LIMIT.toLocaleString('en-US')})`,
    `${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(1)} ms`,
  );
}

async function overviewTtfb(ctx: BenchContext): Promise<void> {
  const pending = sized(ctx, 'OUTBOX_BENCH_CONSOLE_PENDING', 100_000, 2_000);
  const uri = databaseUri(ctx.mongoUri!, `bench_console_${Date.now().toString(36)}`);
  const apps = [];
  try {
    for (const countLimit of [DEFAULT_COUNT_LIMIT, DEFAULT_COUNT_LIMIT / 10]) {
      const app = await consoleApp(uri, countLimit);
      apps.push(app);
      if (apps.length === 1) await writeBacklog(app.get<Connection>(getConnectionToken()), pending);
      const { port } = app.getHttpServer().address() as { port: number };
      line(
        `overview TTFB, countLimit ${countLimit.toLocaleString('en-US')}: median / p95 / max`,
        await timeOverview(`http://127.0.0.1:${port}/outbox`),
      );
    }
    await timeOneCount(apps[0].get<Connection>(getConnectionToken()));
    line('goal', 'under 200 ms with 100,000 pending (default countLimit)');
  } finally {
    await apps[0]
      ?.get<Connection>(getConnectionToken())
      .dropDatabase()
      .catch(() => undefined);
    for (const app of apps) await app.close();
  }
}

export const parts: readonly BenchPart[] = [
  { name: 'console/overview-ttfb', needs: ['mongodb'], run: overviewTtfb },
];
