import { describeWith } from '../harness';
import { startWriteSideApp } from './write-side.fixtures';
import type { WriteSideApp } from './write-side.fixtures';

/**
 * Concurrent transactions updating one document conflict; MongoDB aborts the losers with
 * TransientTransactionError and Mongoose re-runs their bodies. Each re-run emits again: only the
 * committed attempt's event may reach the outbox.
 */
describeWith(
  ['real-mongodb'],
  'transient-error retries write one outbox row per committed call',
  () => {
    let ctx: WriteSideApp;

    beforeAll(async () => {
      ctx = await startWriteSideApp();
      await ctx.connection.collection('counters').insertOne({ _id: 'shared' as never, value: 0 });
    });
    afterAll(async () => {
      await ctx?.close();
    });

    it('12 concurrent calls on one document: 12 increments, 12 events, retries happened', async () => {
      const calls = 12;
      const ids = Array.from({ length: calls }, (_, i) => `call-${i}`);
      await Promise.all(ids.map((id) => ctx.orders.bump(id, 30)));

      const counter = await ctx.connection
        .collection('counters')
        .findOne({ _id: 'shared' as never });
      expect(counter?.value).toBe(calls);
      const rows = await ctx.outbox();
      expect(rows).toHaveLength(calls);
      expect(rows.map((r) => r.payload.callId).sort()).toEqual([...ids].sort());
      expect(new Set(rows.map((r) => r.eventId)).size).toBe(calls);
      // The claim is only proved if some bodies really ran more than once.
      expect(ctx.orders.bodyRuns).toBeGreaterThan(calls);
    });
  },
);
