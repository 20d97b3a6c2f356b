import { eventSlot } from '../../lib/events/event-slot';
import { describeWith } from '../harness';
import { startWriteSideApp } from './write-side.fixtures';
import type { WriteSideApp } from './write-side.fixtures';

describeWith(['mongodb'], 'a written outbox document carries its slot', () => {
  let ctx: WriteSideApp;

  afterEach(async () => {
    await ctx?.close();
  });

  it('@EmitsEvent and OutboxEmitter.emit store eventSlot(aggregateType, aggregateId)', async () => {
    ctx = await startWriteSideApp();
    await ctx.orders.create('o-1', 1);
    await ctx.orders.createWith('o-2', [
      { eventType: 'A', aggregateType: 'Order', aggregateId: 'o-2', payload: {} },
      { eventType: 'B', aggregateType: 'Invoice', aggregateId: 'o-2', payload: {} },
    ]);
    const rows = await ctx.outbox();
    expect(rows.map((row) => [row.aggregateType, row.aggregateId, row.slot])).toEqual([
      ['Order', 'o-1', eventSlot('Order', 'o-1')],
      ['Order', 'o-2', eventSlot('Order', 'o-2')],
      ['Invoice', 'o-2', eventSlot('Invoice', 'o-2')],
    ]);
  });

  it('with aggregateSequence too', async () => {
    ctx = await startWriteSideApp({ aggregateSequence: true });
    await ctx.orders.create('o-3', 1);
    const [row] = await ctx.outbox();
    expect(row).toMatchObject({ sequence: 1, slot: eventSlot('Order', 'o-3') });
  });
});
