import { describeWith } from '../harness';
import {
  readAllAfterDrain,
  relayTestBed,
  startRelayApp,
  testRelayOptions,
  waitFor,
} from './support/relay-app';

jest.setTimeout(180_000);

describeWith(['mongodb', 'kafka'], 'graceful shutdown during a load', () => {
  const bed = relayTestBed('close');

  it('app.close() returns within a bounded time and nothing is lost', async () => {
    const options = testRelayOptions(bed.prefix, { shutdownTimeoutMs: 3000 });
    const first = await startRelayApp(bed.db, options);
    const total = 600;
    let written = 0;
    const load = (async () => {
      for (; written < total; written++)
        await bed.writer.orders.place(`g-${written}`, `agg-${written % 10}`, written);
    })();
    await waitFor(() => (first.metrics?.published ?? 0) >= 100, 30_000, '100 published');
    const started = Date.now();
    await first.close();
    const closeMs = Date.now() - started;
    expect(closeMs).toBeLessThan(3000 + 2000);
    await load;
    const second = await startRelayApp(bed.db, options);
    try {
      const records = await readAllAfterDrain(bed.writer.connection, bed.topic);
      const seqs = new Set(records.map((r) => JSON.parse(r.value as string).seq as number));
      expect([...Array(total).keys()].filter((i) => !seqs.has(i))).toEqual([]);
      await waitFor(
        async () =>
          (await bed.writer.connection
            .collection('outbox')
            .countDocuments({ status: 'pending' })) === 0,
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
