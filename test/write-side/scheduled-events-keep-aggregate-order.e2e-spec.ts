import { describeWith } from '../harness';
import { reminder, scheduling } from './scheduled-events.fixtures';
import { startWriteSideApp } from './write-side.fixtures';
import type { WriteSideApp } from './write-side.fixtures';

/**
 * The order rule across delays, on a real server: a new event of an aggregate with a pending
 * scheduled event gets that event's time (so the relay publishes it after), also within one
 * transaction; `waitForScheduled: false` opts out. Uses `availableAt` only (no server time).
 */
describeWith(['mongodb'], 'scheduled events keep their aggregate order (write side)', () => {
  let ctx: WriteSideApp;
  const byType = async (eventType: string) =>
    (await ctx.outbox()).filter((row) => row.eventType === eventType);

  beforeAll(async () => {
    ctx = await startWriteSideApp({ scheduledEvents: true });
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it("creates the writer's partial index on pending scheduled events by aggregate", async () => {
    const indexes = await ctx.connection.collection('outbox').indexes();
    expect(indexes.find((index) => index.name === 'outbox_scheduled_by_aggregate')).toMatchObject({
      key: { aggregateType: 1, aggregateId: 1, availableAt: 1 },
      partialFilterExpression: { status: 'pending', availableAt: { $exists: true } },
    });
  });

  it('stores availableAt; a later event of the aggregate inherits it, others and opt-outs do not', async () => {
    const { emit } = scheduling(ctx);
    const at = new Date(Date.now() + 3_600_000);
    await emit(reminder('a-1'), { availableAt: at });
    await emit(reminder('a-1', 'OrderPaid'));
    await emit(reminder('a-2', 'OrderPaid'));
    await emit(reminder('a-1', 'Audited'), { waitForScheduled: false });
    const [scheduled] = await byType('ReminderDue');
    expect(scheduled).toMatchObject({ status: 'pending', availableAt: at });
    const paid = await byType('OrderPaid');
    expect(paid.map((row) => [row.aggregateId, row.availableAt])).toEqual([
      ['a-1', at],
      ['a-2', undefined],
    ]);
    expect((await byType('Audited'))[0]).not.toHaveProperty('availableAt');
  });

  it('within one transaction too, and the latest of several scheduled events wins', async () => {
    const { emitter, runner } = scheduling(ctx);
    const soon = new Date(Date.now() + 60_000);
    const later = new Date(Date.now() + 120_000);
    await runner.run(async () => {
      emitter.emit(reminder('b-1', 'Later'), { availableAt: later });
      emitter.emit(reminder('b-1', 'Sooner'), { availableAt: soon });
      emitter.emit(reminder('b-1', 'Now'));
    });
    const rows = (await ctx.outbox()).filter((row) => row.aggregateId === 'b-1');
    expect(rows.map((row) => [row.eventType, row.availableAt])).toEqual([
      ['Later', later],
      ['Sooner', later],
      ['Now', later],
    ]);
  });

  it('a rolled-back scheduled event holds nothing back', async () => {
    const { emitter, runner, emit } = scheduling(ctx);
    await expect(
      runner.run(async () => {
        emitter.emit(reminder('c-1'), { availableAt: new Date(Date.now() + 60_000) });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await emit(reminder('c-1', 'OrderPaid'));
    const rows = (await ctx.outbox()).filter((row) => row.aggregateId === 'c-1');
    expect(rows.map((row) => [row.eventType, row.availableAt])).toEqual([['OrderPaid', undefined]]);
  });
});
