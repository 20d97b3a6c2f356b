import { describeWith, testServers } from '../harness';
import { startWriteSideApp, UUID_V7 } from './write-side.fixtures';
import type { WriteSideApp } from './write-side.fixtures';

describeWith(['mongodb'], 'a committed @Transactional call writes its data and its events', () => {
  let ctx: WriteSideApp;

  beforeAll(async () => {
    ctx = await startWriteSideApp();
  });
  afterAll(async () => {
    await ctx?.close();
  });
  beforeEach(async () => {
    await ctx.connection.collection('orders').deleteMany({});
    await ctx.connection.collection('outbox').deleteMany({});
  });

  it('runs against a MongoDB replica set (real mongod or PoppyDB)', () => {
    expect(['mongodb', 'poppydb']).toContain(testServers().mongoKind);
  });

  it('@EmitsEvent: the order and one pending outbox row with the full envelope', async () => {
    const before = Date.now();
    await ctx.orders.create('o-1', 42);
    expect(await ctx.orderIds()).toEqual(['o-1']);
    const rows = await ctx.outbox();
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row.eventId).toMatch(UUID_V7);
    expect(row).toMatchObject({
      eventType: 'OrderCreated',
      aggregateType: 'Order',
      aggregateId: 'o-1',
      payload: { orderId: 'o-1', total: 42, at: new Date(0) },
      headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      status: 'pending',
      attempts: 0,
    });
    expect(row.occurredAt).toBeInstanceOf(Date);
    expect(row.occurredAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
  });

  it('OutboxEmitter.emit: several events of one call, in emit order', async () => {
    await ctx.orders.createWith('o-2', [
      { eventType: 'A', aggregateType: 'Order', aggregateId: 'o-2', payload: { n: 1 } },
      {
        eventType: 'B',
        aggregateType: 'Order',
        aggregateId: 'o-2',
        payload: { n: 2, list: [1, 'x'] },
      },
    ]);
    const rows = await ctx.outbox();
    expect(rows.map((r) => r.eventType)).toEqual(['A', 'B']);
    expect(rows[1].payload).toEqual({ n: 2, list: [1, 'x'] });
    expect(rows[0].eventId < rows[1].eventId).toBe(true); // UUIDv7: time-ordered
  });

  it('nested calls share one transaction: all rows of inner and outer commit together', async () => {
    await ctx.orders.outerWithInner('n');
    expect(await ctx.orderIds()).toEqual(['n-inner', 'n-outer']);
    expect((await ctx.outbox()).map((r) => r.aggregateId)).toEqual(['n-inner']);
  });

  it('creates a unique index on eventId', async () => {
    const indexes = await ctx.connection.collection('outbox').indexes();
    expect(indexes).toEqual(
      expect.arrayContaining([expect.objectContaining({ key: { eventId: 1 }, unique: true })]),
    );
  });

  it("switches on Mongoose's transactionAsyncLocalStorage", () => {
    expect(ctx.connection.base.get('transactionAsyncLocalStorage')).toBe(true);
  });
});
