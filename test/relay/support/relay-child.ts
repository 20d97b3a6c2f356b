// A relay in its own process (crash and failover tests). Env: RELAY_DB, RELAY_TOPIC_PREFIX,
// RELAY_OPTIONS (JSON, merged over testRelayOptions), plus the runner's MONGODB_URI/KAFKA_BROKERS.
import 'reflect-metadata';
import { startRelayApp, testRelayOptions } from './relay-app';

async function main(): Promise<void> {
  const extra = JSON.parse(process.env.RELAY_OPTIONS ?? '{}');
  const ctx = await startRelayApp(
    process.env.RELAY_DB as string,
    testRelayOptions(process.env.RELAY_TOPIC_PREFIX as string, extra),
  );
  process.stdout.write('ready\n');
  const report = setInterval(() => {
    process.stdout.write(
      `leader=${ctx.relay?.isLeader ? 1 : 0} published=${ctx.metrics?.published}\n`,
    );
  }, 250);
  const shutdown = async (): Promise<void> => {
    clearInterval(report);
    await ctx.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown());
}

main().catch((error) => {
  process.stderr.write(`relay child failed: ${error?.stack ?? error}\n`);
  process.exit(1);
});
