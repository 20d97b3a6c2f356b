import { describeWith, testServers } from '../harness';
import {
  ancientResumeToken,
  readAllAfterDrain,
  relayTestBed,
  startRelayApp,
  testRelayOptions,
  waitFor,
} from './support/relay-app';

jest.setTimeout(180_000);

describeWith(
  ['mongodb', 'kafka'],
  'an unusable resume token: the relay recovers from the collection',
  () => {
    const bed = relayTestBed('lost');

    it('publishes what was written while it was down, counts a recovery, and follows the stream again', async () => {
      const options = testRelayOptions(bed.prefix);
      let relay = await startRelayApp(bed.db, options);
      for (let i = 0; i < 20; i++) await bed.writer.orders.place(`a-${i}`, `agg-${i % 4}`, i);
      await waitFor(
        async () => (relay.metrics?.published ?? 0) >= 20,
        30_000,
        'the first 20 events',
      );
      await relay.close();

      // The position is gone: a token from far outside the oplog window (as after a long outage).
      const state = bed.writer.connection.collection<{ _id: string; token?: { _data?: string } }>(
        'outbox_relay_state',
      );
      const checkpoint = await state.findOne({ _id: 'checkpoint:default' });
      expect(checkpoint?.token).toBeDefined();
      await state.updateOne(
        { _id: 'checkpoint:default' },
        { $set: { token: ancientResumeToken(checkpoint?.token) } },
      );

      for (let i = 20; i < 60; i++) await bed.writer.orders.place(`a-${i}`, `agg-${i % 4}`, i);
      relay = await startRelayApp(bed.db, options);
      try {
        for (let i = 60; i < 80; i++) await bed.writer.orders.place(`a-${i}`, `agg-${i % 4}`, i);
        const records = await readAllAfterDrain(bed.writer.connection, bed.topic);
        const seqs = new Set(records.map((r) => JSON.parse(r.value as string).seq as number));
        expect([...Array(80).keys()].filter((i) => !seqs.has(i))).toEqual([]);
        // Real MongoDB rejects the forged token (286 ChangeStreamHistoryLost) and the relay counts a
        // recovery. PoppyDB's tokens are plain counters and it does not reject this one, so there
        // only the no-loss half of the claim is checked.
        if (testServers().mongoKind === 'mongodb') {
          expect(relay.metrics?.recoveries).toBeGreaterThanOrEqual(1);
        }
        await waitFor(
          async () =>
            (await bed.writer.connection
              .collection('outbox')
              .countDocuments({ status: 'pending' })) === 0,
          20_000,
          'no pending events',
        );
      } finally {
        await relay.close();
      }
    });
  },
);
