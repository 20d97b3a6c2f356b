import { Logger } from '@nestjs/common';
import { createTopics, describeWith, uniqueName } from '../harness';
import {
  readAllAfterDrain,
  startRelayApp,
  testLogLevels,
  testRelayOptions,
  waitFor,
} from './support/relay-app';
import type { RelayTestApp } from './support/relay-app';

jest.setTimeout(180_000);

describeWith(['mongodb', 'kafka'], 'graceful shutdown during a load', () => {
  let writer: RelayTestApp;
  let prefix: string;
  let db: string;

  beforeAll(async () => {
    Logger.overrideLogger(testLogLevels());
    db = uniqueName('relay-close');
    prefix = `${uniqueName('close')}.`;
    await createTopics([`${prefix}Order`]);
    writer = await startRelayApp(db, false);
  });
  afterAll(async () => {
    await writer?.connection.dropDatabase().catch(() => undefined);
    await writer?.close();
  });

  it('app.close() returns within a bounded time and nothing is lost', async () => {
    const options = testRelayOptions(prefix, { shutdownTimeoutMs: 3000 });
    const first = await startRelayApp(db, options);
    const total = 600;
    let written = 0;
    const load = (async () => {
      for (; written < total; written++)
        await writer.orders.place(`g-${written}`, `agg-${written % 10}`, written);
    })();
    await waitFor(() => (first.metrics?.published ?? 0) >= 100, 30_000, '100 published');
    const started = Date.now();
    await first.close();
    const closeMs = Date.now() - started;
    expect(closeMs).toBeLessThan(3000 + 2000);
    await load;
    const second = await startRelayApp(db, options);
    try {
      const records = await readAllAfterDrain(writer.connection, `${prefix}Order`);
      const seqs = new Set(records.map((r) => JSON.parse(r.value as string).seq as number));
      expect([...Array(total).keys()].filter((i) => !seqs.has(i))).toEqual([]);
      await waitFor(
        async () =>
          (await writer.connection.collection('outbox').countDocuments({ status: 'pending' })) ===
          0,
        20_000,
        'no pending events',
      );
      process.stdout.write(
        `[graceful-shutdown] close took ${closeMs} ms; ${records.length - total} duplicates\n`,
      );
    } finally {
      await second.close();
    }
  });
});
