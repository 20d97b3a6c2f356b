import { describeWith, readTopic } from '../harness';
import { relayTestBed } from './support/relay-app';

jest.setTimeout(180_000);

// Only real MongoDB proves this: PoppyDB's change stream emits writes of transactions that later
// abort (INFRA.md). The relay double-checks the collection, but the claim is MongoDB's.
describeWith(['real-mongodb', 'kafka'], 'a rolled-back call publishes nothing', () => {
  const bed = relayTestBed('rb');

  beforeAll(async () => {
    await bed.startRelay();
  });

  it('sends the committed marker after it, never the rolled-back event', async () => {
    await expect(bed.writer.orders.placeThenFail('ord-rb', 'agg-rb')).rejects.toThrow(
      'rolled back',
    );
    await bed.writer.orders.place('ord-marker', 'agg-marker', 1);
    const records = await readTopic(bed.topic, { count: 2, timeoutMs: 8000 });
    expect(records.map((r) => r.key)).toEqual(['agg-marker']);
    expect(
      await bed.writer.connection.collection('outbox').countDocuments({ aggregateId: 'agg-rb' }),
    ).toBe(0);
  });
});
