import type { mongo } from 'mongoose';
import type { OutboxEventRecord } from '../../lib';
import { describeWith, waitFor } from '../harness';
import { startWriteSideApp } from './write-side.fixtures';
import type { WriteSideApp } from './write-side.fixtures';

const event = (aggregateId: string, eventType: string) => ({
  eventType,
  aggregateType: 'Order',
  aggregateId,
  payload: { eventType },
});

const sequencesOf = (rows: OutboxEventRecord[], aggregateId: string) =>
  rows.filter((row) => row.aggregateId === aggregateId).map((row) => row.sequence);

describeWith(['mongodb'], 'aggregateSequence: events numbered per aggregate', () => {
  let ctx: WriteSideApp;

  beforeAll(async () => {
    ctx = await startWriteSideApp({ aggregateSequence: true });
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it("creates the counters' collection at bootstrap, not inside a transaction", async () => {
    const names = (await ctx.connection.db!.listCollections().toArray()).map((c) => c.name);
    expect(names).toContain('outbox_sequences');
  });

  it('numbers each aggregate from 1, in emit order within a call, continuing across calls', async () => {
    await ctx.orders.createWith('o-1', [
      event('a-1', 'A'),
      event('a-1', 'B'),
      event('x-1', 'X'),
      event('a-1', 'C'),
    ]);
    await ctx.orders.createWith('o-2', [event('a-1', 'D')]);
    const rows = await ctx.outbox();
    expect(sequencesOf(rows, 'a-1')).toEqual([1, 2, 3, 4]);
    expect(rows.filter((r) => r.aggregateId === 'a-1').map((r) => r.eventType)).toEqual([
      'A',
      'B',
      'C',
      'D',
    ]);
    expect(sequencesOf(rows, 'x-1')).toEqual([1]);
    const counter = await ctx.connection
      .collection('outbox_sequences')
      .findOne({ _id: 'Order/a-1' as never });
    expect(counter?.sequence).toBe(4);
  });

  it('a call that throws uses up no number', async () => {
    await expect(ctx.orders.createThenFail('r-1', new Error('boom'))).rejects.toThrow('boom');
    await ctx.orders.create('r-1', 3);
    const rows = await ctx.outbox();
    expect(sequencesOf(rows, 'r-1')).toEqual([1]);
  });
});

describeWith(['mongodb'], 'aggregateSequence is off by default', () => {
  let plain: WriteSideApp;

  beforeAll(async () => {
    plain = await startWriteSideApp();
  });
  afterAll(async () => {
    await plain?.close();
  });

  it('no sequence field, no counter written', async () => {
    await plain.orders.create('p-1', 1);
    const [row] = await plain.outbox();
    expect(row).not.toHaveProperty('sequence');
    const names = (await plain.connection.db!.listCollections().toArray()).map((c) => c.name);
    expect(names).not.toContain('outbox_sequences');
  });
});

/**
 * Concurrent calls emitting for one aggregate, with no other common write: the counter makes
 * them conflict, so MongoDB serializes them. The change stream shows commit order, which must be
 * sequence order, with no gap and no duplicate.
 */
describeWith(
  ['real-mongodb'],
  'aggregateSequence under concurrency: sequence order is commit order',
  () => {
    let ctx: WriteSideApp;
    let stream: mongo.ChangeStream | undefined;

    beforeAll(async () => {
      ctx = await startWriteSideApp({ aggregateSequence: true });
    });
    afterAll(async () => {
      await stream?.close();
      await ctx?.close();
    });

    it('16 concurrent calls: sequences 1..16, committed in that order', async () => {
      const calls = 16;
      const committed: number[] = [];
      stream = ctx.connection
        .db!.collection('outbox')
        .watch([{ $match: { operationType: 'insert' } }]);
      stream.on('change', (change: { fullDocument?: OutboxEventRecord }) => {
        committed.push(change.fullDocument?.sequence as number);
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      await Promise.all(
        Array.from({ length: calls }, (_, i) =>
          ctx.orders.createWith(`c-${i}`, [event('hot', `E${i}`)]),
        ),
      );
      await waitFor(async () => committed.length >= calls, 20_000, 'every insert on the stream');
      expect(committed).toEqual(Array.from({ length: calls }, (_, i) => i + 1));
    });
  },
);
