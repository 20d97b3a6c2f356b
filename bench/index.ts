/* Runs every benchmark against the servers of scripts/run-with-servers.js (`npm run bench`).
 * `npm run bench -- write-side` runs one. Figures are printed; nothing here asserts timings. */
import 'reflect-metadata';

interface BenchContext {
  mongoUri?: string;
  mongoKind: 'mongodb' | 'poppydb' | 'none';
  kafkaBrokers: string[];
}

const BENCHES: Record<string, () => Promise<{ runBench(ctx: BenchContext): Promise<void> }>> = {
  // The relay first: it reports the peak RSS of this process.
  relay: () => import('./relay.bench'),
  'write-side': () => import('./write-side.bench'),
  'change-streams': () => import('./change-streams.bench'),
};

async function main() {
  const only = process.argv.slice(2);
  const ctx: BenchContext = {
    mongoUri: process.env.MONGODB_URI || undefined,
    mongoKind:
      (process.env.OUTBOX_TEST_MONGODB_KIND as BenchContext['mongoKind']) ||
      (process.env.MONGODB_URI ? 'mongodb' : 'none'),
    kafkaBrokers: (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean),
  };
  console.log(
    `bench: node ${process.version}, MongoDB ${ctx.mongoKind}, Kafka ${ctx.kafkaBrokers.join(',') || 'none'}`,
  );
  for (const [name, load] of Object.entries(BENCHES)) {
    if (only.length > 0 && !only.includes(name)) continue;
    console.log(`\n== ${name}`);
    const bench = await load();
    await bench.runBench(ctx);
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
