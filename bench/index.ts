/* Runs every benchmark against the servers of scripts/run-with-servers.js (`npm run bench`).
 * `npm run bench -- write-side` runs one; `--smoke` runs every part at a small size (CI).
 * Figures are printed; nothing here asserts timings. A part that throws or finds a wrong result
 * (events lost, duplicated, left pending) fails the run; a part whose server is missing is listed
 * as skipped. */
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import type { BenchContext, BenchNeed, BenchPart } from './bench-part';

const BENCHES: Record<string, () => Promise<{ parts: readonly BenchPart[] }>> = {
  // The relay first: it reports the peak RSS of its own process.
  relay: () => import('./relay.bench'),
  'write-side': () => import('./write-side.bench'),
  'change-streams': () => import('./change-streams.bench'),
  consume: () => import('./consume.bench'),
  scheduled: () => import('./scheduled.bench'),
  console: () => import('./console.bench'),
  tenants: () => import('./tenants.bench'),
};

function context(smoke: boolean): BenchContext {
  return {
    mongoUri: process.env.MONGODB_URI || undefined,
    mongoKind:
      (process.env.OUTBOX_TEST_MONGODB_KIND as BenchContext['mongoKind']) ||
      (process.env.MONGODB_URI ? 'mongodb' : 'none'),
    kafkaBrokers: (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean),
    smoke,
  };
}

const hasMongo = (ctx: BenchContext): boolean => Boolean(ctx.mongoUri) && ctx.mongoKind !== 'none';

/** Why `need` cannot be met in this run, or undefined when it can. */
function missing(ctx: BenchContext, need: BenchNeed): string | undefined {
  if (need === 'kafka') return ctx.kafkaBrokers.length > 0 ? undefined : 'needs Kafka';
  return hasMongo(ctx) ? undefined : 'needs MongoDB';
}

function describeServers(ctx: BenchContext): string {
  const why = process.env.OUTBOX_TEST_MONGODB_REASON;
  const mongo = hasMongo(ctx)
    ? ctx.mongoKind
    : `none (${why || 'MONGODB_URI not set'}; set MONGODB_URI to a replica set)`;
  return `MongoDB ${mongo}, Kafka ${ctx.kafkaBrokers.join(',') || 'none (set KAFKA_BROKERS)'}`;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const smoke = args.includes('--smoke');
  const only = args.filter((arg) => arg !== '--smoke');
  const unknown = only.filter((name) => !(name in BENCHES));
  if (unknown.length > 0) {
    console.error(
      `bench: unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')} (and --smoke)`,
    );
    return 2;
  }
  Logger.overrideLogger(['error']);
  const ctx = context(smoke);
  console.log(`bench${smoke ? ' --smoke' : ''}: node ${process.version}, ${describeServers(ctx)}`);
  const passed: string[] = [];
  const failed: string[] = [];
  const skipped: string[] = [];
  for (const [bench, load] of Object.entries(BENCHES)) {
    if (only.length > 0 && !only.includes(bench)) continue;
    const { parts } = await load();
    for (const part of parts) {
      console.log(`\n== ${part.name}`);
      const why = part.needs.map((need) => missing(ctx, need)).find(Boolean);
      if (why) {
        console.log(`  skipped: ${why}`);
        skipped.push(`${part.name} (${why})`);
        continue;
      }
      const started = Date.now();
      try {
        await part.run(ctx);
        passed.push(part.name);
        console.log(`  (${part.name}: ${((Date.now() - started) / 1000).toFixed(1)} s)`);
      } catch (error) {
        console.log(`  FAILED after ${((Date.now() - started) / 1000).toFixed(1)} s: ${error}`);
        if (!(error instanceof Error && error.name === 'BenchCheckError')) console.error(error);
        failed.push(part.name);
      }
    }
  }
  console.log('');
  for (const name of skipped) console.log(`bench: skipped ${name}`);
  for (const name of failed) console.log(`bench: FAILED ${name}`);
  console.log(`bench: ${passed.length} passed, ${failed.length} failed, ${skipped.length} skipped`);
  return failed.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
