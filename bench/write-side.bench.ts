/**
 * Write-side benchmark: what do `@Transactional` + `@EmitsEvent` cost over a hand-written
 * `session.withTransaction` doing the same two inserts (one domain row, one outbox row)?
 * Prints median latency, calls/s and the ratio, at concurrency 1 and (real MongoDB only) 16;
 * then the same with `scheduledEvents` (one schedule read more per transaction) and with
 * `aggregateSequence` (one counter write more per aggregate). Beside each level, the commands
 * each side sent per call, counted by the driver's command monitoring over the same calls
 * (test/harness/command-recorder.ts; both sides pay the monitoring alike), and what the
 * decorated method sent more. test/write-side/decorated-method-sends-no-extra-command.e2e-spec.ts
 * pins these lists. Each call must leave exactly one outbox row, or the part fails. `--smoke`:
 * one round of 20 calls.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { getConnectionToken, InjectModel, MongooseModule } from '@nestjs/mongoose';
import { Schema } from 'mongoose';
import type { Connection, Model } from 'mongoose';
import { v7 as uuidv7 } from 'uuid';
import { EmitsEvent, OutboxModule } from '../lib';
import { getOutboxEventModel } from '../lib/documents/outbox-event.schema';
import { CommandRecorder, countCommands } from '../test/harness/command-recorder';
import { check } from './bench-part';
import type { BenchContext, BenchPart } from './bench-part';

interface Item {
  _id: string;
  n: number;
}
const ItemSchema = new Schema<Item>({ _id: String, n: Number }, { versionKey: false });

@Injectable()
class BenchService {
  constructor(@InjectModel('BenchItem') private readonly items: Model<Item>) {}

  @EmitsEvent<Item>('ItemCreated', {
    aggregateType: 'Item',
    aggregateId: (item) => item._id,
    payload: (item) => ({ n: item.n }),
  })
  async create(id: string, n: number): Promise<Item> {
    await this.items.create([{ _id: id, n }]);
    return { _id: id, n };
  }
}

@Module({
  imports: [MongooseModule.forFeature([{ name: 'BenchItem', schema: ItemSchema }])],
  providers: [BenchService],
})
class BenchItemsModule {}

/** The baseline: what a careful user writes by hand without the library. */
function handWritten(connection: Connection, items: Model<Item>) {
  const outbox = getOutboxEventModel(connection, 'outbox');
  return async (id: string, n: number): Promise<void> => {
    const session = await connection.startSession();
    try {
      await session.withTransaction(async () => {
        await items.create([{ _id: id, n }], { session });
        await outbox.insertMany(
          [
            {
              eventId: uuidv7(),
              eventType: 'ItemCreated',
              aggregateType: 'Item',
              aggregateId: id,
              payload: { n },
              occurredAt: new Date(),
              status: 'pending',
              attempts: 0,
            },
          ],
          { session, lean: true },
        );
      });
    } finally {
      await session.endSession();
    }
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

interface Measurement {
  medianMs: number;
  callsPerSecond: number;
}

let counter = 0;
async function measure(
  call: (id: string, n: number) => Promise<unknown>,
  calls: number,
  concurrency: number,
): Promise<Measurement> {
  const latencies: number[] = [];
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) {
        next++;
        const id = `item-${++counter}`;
        const t0 = process.hrtime.bigint();
        await call(id, counter);
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { medianMs: median(latencies), callsPerSecond: calls / seconds };
}

interface VariantOptions {
  aggregateSequence?: boolean;
  scheduledEvents?: boolean;
}

async function startBenchApp(
  uri: string,
  options: VariantOptions,
): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(
    {
      module: class WriteSideBenchModule {},
      imports: [
        MongooseModule.forRoot(uri, { monitorCommands: true }),
        OutboxModule.forRoot({ relay: false, ...options }),
        BenchItemsModule,
      ],
    },
    { logger: ['error', 'warn'] },
  );
}

/** Interleaved rounds of the decorated call and the hand-written baseline, one line per level. */
async function compare(
  ctx: BenchContext,
  app: INestApplicationContext,
  label: string,
  levels: number[],
) {
  const connection = app.get<Connection>(getConnectionToken());
  const service = app.get(BenchService);
  const decorated = (id: string, n: number) => service.create(id, n);
  const items = connection.model<Item>('BenchItem');
  const baseline = handWritten(connection, items);
  // Its collection and indexes (autoCreate, autoIndex) before any call.
  await items.init();
  const warmUp = ctx.smoke ? 5 : 30;
  await measure(decorated, warmUp, 1);
  await measure(baseline, warmUp, 1);
  // Nothing else uses the client while a round runs (relay off): what it sends is the calls'.
  const recorder = new CommandRecorder(connection.getClient());
  for (const concurrency of levels) {
    const calls = (concurrency === 1 ? 200 : 800) / (ctx.smoke ? 10 : 1);
    const rounds: { decorated: Measurement[]; baseline: Measurement[] } = {
      decorated: [],
      baseline: [],
    };
    const sent: { decorated: string[]; baseline: string[] } = { decorated: [], baseline: [] };
    const recorded = async (side: 'decorated' | 'baseline') => {
      recorder.start();
      const measured = await measure(
        side === 'decorated' ? decorated : baseline,
        calls,
        concurrency,
      );
      sent[side].push(...recorder.stop());
      rounds[side].push(measured);
    };
    // Interleaved rounds, so drift (cache, journal) hits both alike.
    for (let round = 0; round < (ctx.smoke ? 1 : 3); round++) {
      await recorded('baseline');
      await recorded('decorated');
    }
    const summarize = (ms: Measurement[]) => ({
      medianMs: median(ms.map((m) => m.medianMs)),
      callsPerSecond: median(ms.map((m) => m.callsPerSecond)),
    });
    const d = summarize(rounds.decorated);
    const b = summarize(rounds.baseline);
    console.log(
      `  concurrency ${String(concurrency).padStart(2)}: ` +
        `${label} median ${d.medianMs.toFixed(2)} ms, ${d.callsPerSecond.toFixed(0)} calls/s | ` +
        `hand-written withTransaction median ${b.medianMs.toFixed(2)} ms, ${b.callsPerSecond.toFixed(0)} calls/s | ` +
        `latency ratio ${(d.medianMs / b.medianMs).toFixed(2)}x, throughput ratio ${(d.callsPerSecond / b.callsPerSecond).toFixed(2)}x`,
    );
    const perSide = rounds.decorated.length * calls;
    console.log(
      `  concurrency ${String(concurrency).padStart(2)}: commands per call: ` +
        `${label} ${countCommands(sent.decorated, perSide)} | ` +
        `hand-written ${countCommands(sent.baseline, perSide)} | ` +
        `more: ${countCommands(surplus(sent.decorated, sent.baseline), perSide)}`,
    );
  }
  recorder.detach();
}

/** The commands of `more` beyond those of `fewer`, by name (a name sent less is left out). */
function surplus(more: readonly string[], fewer: readonly string[]): string[] {
  const left = [...fewer];
  return more.filter((name) => {
    const at = left.indexOf(name);
    if (at < 0) return true;
    left.splice(at, 1);
    return false;
  });
}

async function writeSide(ctx: BenchContext): Promise<void> {
  const url = new URL(ctx.mongoUri as string);
  url.pathname = `/bench_ws_${Date.now().toString(36)}`;
  const levels = ctx.mongoKind === 'mongodb' ? [1, 16] : [1];
  console.log(
    `write-side bench on ${ctx.mongoKind === 'mongodb' ? 'real MongoDB' : 'PoppyDB (not MongoDB: numbers are indicative only; concurrency 16 skipped, its transactions are not concurrent)'}`,
  );
  // One app at a time: two OutboxModules on the same connection name in one process share one runtime.
  const variants: Array<{ label: string; options: VariantOptions }> = [
    { label: '@Transactional+@EmitsEvent', options: {} },
    { label: 'the same with scheduledEvents', options: { scheduledEvents: true } },
    { label: 'the same with aggregateSequence', options: { aggregateSequence: true } },
  ];
  for (const { label, options } of variants) {
    const app = await startBenchApp(url.toString(), options);
    const connection = app.get<Connection>(getConnectionToken());
    try {
      const callsBefore = counter;
      await compare(ctx, app, label, levels);
      // Both the decorated method and the hand-written baseline write one outbox row per call.
      const rows = await connection.collection('outbox').countDocuments();
      check(
        rows === counter - callsBefore,
        `${rows} outbox rows for ${counter - callsBefore} calls`,
      );
    } finally {
      await connection.dropDatabase().catch(() => undefined);
      await app.close();
    }
  }
}

export const parts: readonly BenchPart[] = [
  { name: 'write-side', needs: ['mongodb'], run: writeSide },
];
