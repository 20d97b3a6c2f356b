import { Logger } from '@nestjs/common';
import { createTopics, describeWith, readTopic, uniqueName } from '../harness';
import { startRelayApp, testLogLevels, testRelayOptions } from './support/relay-app';
import type { RelayTestApp } from './support/relay-app';

jest.setTimeout(180_000);

// Only real MongoDB proves this: PoppyDB's change stream emits writes of transactions that later
// abort (INFRA.md). The relay double-checks the collection, but the claim is MongoDB's.
describeWith(['real-mongodb', 'kafka'], 'a rolled-back call publishes nothing', () => {
  let writer: RelayTestApp;
  let relay: RelayTestApp;
  let prefix: string;

  beforeAll(async () => {
    Logger.overrideLogger(testLogLevels());
    const db = uniqueName('relay-rb');
    prefix = `${uniqueName('rb')}.`;
    await createTopics([`${prefix}Order`]);
    writer = await startRelayApp(db, false);
    relay = await startRelayApp(db, testRelayOptions(prefix));
  });
  afterAll(async () => {
    await relay?.close();
    await writer?.connection.dropDatabase().catch(() => undefined);
    await writer?.close();
  });

  it('sends the committed marker after it, never the rolled-back event', async () => {
    await expect(writer.orders.placeThenFail('ord-rb', 'agg-rb')).rejects.toThrow('rolled back');
    await writer.orders.place('ord-marker', 'agg-marker', 1);
    const records = await readTopic(`${prefix}Order`, { count: 2, timeoutMs: 8000 });
    expect(records.map((r) => r.key)).toEqual(['agg-marker']);
    expect(
      await writer.connection.collection('outbox').countDocuments({ aggregateId: 'agg-rb' }),
    ).toBe(0);
  });
});
