import { describeWith } from '../harness';
import { reminder, scheduling, serverTime } from './scheduled-events.fixtures';
import { startWriteSideApp } from './write-side.fixtures';
import type { WriteSideApp } from './write-side.fixtures';

/**
 * What needs the server's own clock (`$$NOW`): a delay counted from the write, and cancel's
 * "not yet due" check in the update's filter. PoppyDB evaluates neither `$$NOW` nor update
 * pipelines, so these claims need a real mongod.
 */
describeWith(['real-mongodb'], 'scheduled events on the server clock', () => {
  let ctx: WriteSideApp;
  const rowOf = async (eventId: string) =>
    (await ctx.outbox()).find((row) => row.eventId === eventId);

  beforeAll(async () => {
    ctx = await startWriteSideApp({ scheduledEvents: true });
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('delayMs counts from the server time of the write, inside the transaction', async () => {
    const { emit } = scheduling(ctx);
    const before = await serverTime(ctx);
    const id = await emit(reminder('d-1'), { delayMs: 60_000 });
    const after = await serverTime(ctx);
    const due = (await rowOf(id))!.availableAt!.getTime();
    expect(due).toBeGreaterThanOrEqual(before.getTime() + 60_000);
    expect(due).toBeLessThanOrEqual(after.getTime() + 60_000);
  });

  it('cancel: cancelled (server time stamped), then already cancelled; the document says cancelled', async () => {
    const { emit, cancel } = scheduling(ctx);
    const id = await emit(reminder('e-1'), { delayMs: 60_000 });
    const before = await serverTime(ctx);
    const result = await cancel(id);
    expect(result).toMatchObject({ outcome: 'cancelled', eventId: id, alreadyCancelled: false });
    const row = await rowOf(id);
    expect(row).toMatchObject({ status: 'cancelled' });
    expect(row!.cancelledAt!.getTime()).toBeGreaterThanOrEqual(before.getTime());
    expect(await cancel(id)).toMatchObject({ outcome: 'cancelled', alreadyCancelled: true });
  });

  it('cancel: already-due, not-scheduled, published, not-found', async () => {
    const { emit, cancel } = scheduling(ctx);
    const due = await emit(reminder('f-1'), { delayMs: 0 });
    const immediate = await emit(reminder('f-2'));
    const published = await emit(reminder('f-3'), { delayMs: 0 });
    await ctx.connection
      .collection('outbox')
      .updateOne(
        { eventId: published },
        { $set: { status: 'published', publishedAt: new Date() } },
      );
    expect((await cancel(due)).outcome).toBe('already-due');
    expect((await cancel(immediate)).outcome).toBe('not-scheduled');
    expect((await cancel(published)).outcome).toBe('published');
    expect((await cancel('0190a0a0-0000-7000-8000-000000000000')).outcome).toBe('not-found');
  });

  it('a cancel in a transaction that rolls back leaves the event pending', async () => {
    const { emit, emitter, runner } = scheduling(ctx);
    const id = await emit(reminder('g-1'), { delayMs: 60_000 });
    await expect(
      runner.run(async () => {
        await emitter.cancel(id);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await rowOf(id))?.status).toBe('pending');
  });

  it("the order rule's read uses the writer's partial index", async () => {
    const explain = (await ctx.connection
      .collection('outbox')
      .find({
        status: 'pending',
        availableAt: { $exists: true },
        aggregateType: 'Order',
        aggregateId: 'd-1',
      })
      .explain()) as { queryPlanner: { winningPlan: unknown } };
    expect(JSON.stringify(explain.queryPlanner.winningPlan)).toContain(
      'outbox_scheduled_by_aggregate',
    );
  });
});
