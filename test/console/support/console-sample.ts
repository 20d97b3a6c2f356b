import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import {
  OutboxEmitter,
  TransactionRunner,
  type OutboxEventInput,
  type EmitSchedule,
} from '../../../lib';
import { loadConfig } from '../../../sample-app/config';
import { startSample, type RunningSample } from '../../../sample-app/sample.app';
import { mongoUriFor, testServers, uniqueName } from '../../harness';

export interface ConsoleSample {
  sample: RunningSample;
  db: Connection;
  /** The console's URL (`/outbox` of the sample). */
  console: string;
  topicPrefix: string;
  emit(events: OutboxEventInput[], schedule?: EmitSchedule): Promise<string[]>;
  close(): Promise<void>;
}

/** The sample app (API + relay + consumer, Express) with its console, on the run's servers. */
export async function startConsoleSample(name: string): Promise<ConsoleSample> {
  const topicPrefix = `${uniqueName(name)}.`;
  const sample = await startSample(
    loadConfig({
      MONGODB_URI: mongoUriFor(uniqueName(name)),
      KAFKA_BROKERS: testServers().kafkaBrokers.join(','),
      PORT: '0',
      SAMPLE_CONSUMER_GROUP: uniqueName(`${name}-summaries`),
      SAMPLE_TOPIC_PREFIX: topicPrefix,
    }),
    false,
  );
  const db = sample.app.get<Connection>(getConnectionToken());
  const emitter = sample.app.get(OutboxEmitter);
  const runner = sample.app.get(TransactionRunner);
  return {
    sample,
    db,
    console: `${sample.url}/outbox`,
    topicPrefix,
    emit: (events, schedule) => runner.run(async () => emitter.emit(events, schedule)),
    close: async () => {
      await db.dropDatabase().catch(() => undefined);
      await sample.close();
    },
  };
}
