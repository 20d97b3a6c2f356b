import { Logger } from '@nestjs/common';
import { loadConfig } from './config';
import { startSample } from './sample.app';

/**
 * Runs the sample: `MONGODB_URI=... KAFKA_BROKERS=... npx ts-node sample-app/main.ts`.
 * `SAMPLE_PARTS=api,relay,consumer` (default) runs all in one process; any subset runs separately.
 */
async function main() {
  const config = loadConfig();
  const running = await startSample(config);
  new Logger('Sample').log(
    `running ${[...config.parts].join(' + ')}${running.url ? ` on ${running.url}` : ''}`,
  );
}

main().catch((error) => {
  new Logger('Sample').error(error instanceof Error ? error.message : error);
  process.exit(1);
});
