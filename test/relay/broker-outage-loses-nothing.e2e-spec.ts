import { Logger } from '@nestjs/common';
import {
  createTopics,
  describeWith,
  startKafka,
  stopKafka,
  testServers,
  uniqueName,
} from '../harness';
import {
  readAllAfterDrain,
  sleep,
  startRelayApp,
  testLogLevels,
  testRelayOptions,
  waitFor,
} from './support/relay-app';
import type { RelayTestApp } from './support/relay-app';

jest.setTimeout(240_000);

/**
 * The whole relay (MongoDB outbox, change stream, sweep, KafkaPublisher) while the broker is
 * stopped for 20 s in the middle of a load: it pauses, recovers by itself, and loses nothing.
 */
describeWith(['mongodb', 'managed-kafka'], 'the relay through a 20 s broker outage', () => {
  let writer: RelayTestApp;
  let relay: RelayTestApp | undefined;

  beforeAll(() => Logger.overrideLogger(testLogLevels()));
  afterAll(async () => {
    await relay?.close();
    await writer?.connection.dropDatabase().catch(() => undefined);
    await writer?.close();
  });

  it('publishes every event once the broker is back, with no dead letter', async () => {
    const db = uniqueName('relay-outage');
    const prefix = `${uniqueName('outage')}.`;
    const topic = `${prefix}Order`;
    await createTopics([topic], 3);
    writer = await startRelayApp(db, false);
    relay = await startRelayApp(
      db,
      testRelayOptions(prefix, {
        kafka: {
          brokers: testServers().kafkaBrokers,
          connectionTimeout: 1000,
          requestTimeout: 3000,
          retry: { retries: 2, initialRetryTime: 200, maxRetryTime: 1000 },
        },
        maxAttempts: 3,
      }),
    );

    const total = 300;
    let written = 0;
    const load = (async () => {
      for (; written < total; written++) {
        await writer.orders.place(`o-${written}`, `agg-${written % 10}`, written);
        await sleep(20);
      }
    })();
    await waitFor(() => written >= 100, 60_000, '100 events written');
    await stopKafka();
    const stoppedAt = Date.now();
    await waitFor(
      () => written >= 200 || Date.now() - stoppedAt > 15_000,
      30_000,
      'writes during the outage',
    );
    await sleep(Math.max(0, 20_000 - (Date.now() - stoppedAt)));
    await startKafka();
    await load;

    const records = await readAllAfterDrain(writer.connection, topic, 120_000);
    const seqs = new Set(records.map((r) => JSON.parse(r.value as string).seq as number));
    expect([...Array(total).keys()].filter((i) => !seqs.has(i))).toEqual([]);
    expect(await writer.connection.collection('outbox_dead_letters').countDocuments()).toBe(0);
    expect(relay.metrics?.outages).toBeGreaterThanOrEqual(1);
    process.stdout.write(
      `[relay-outage] ${total} events, ${records.length - total} duplicates, outages counted: ${relay.metrics?.outages}\n`,
    );
  });
});
