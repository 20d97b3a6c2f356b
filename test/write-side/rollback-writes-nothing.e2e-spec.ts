import {
  InvalidOutboxEventError,
  OutboxEmitter,
  OutboxTransactionRequiredError,
  PayloadTooLargeError,
  UnserializablePayloadError,
} from '../../lib';
import type { OutboxEventInput } from '../../lib';
import { describeWith } from '../harness';
import { startWriteSideApp } from './write-side.fixtures';
import type { WriteSideApp } from './write-side.fixtures';

const good: OutboxEventInput = {
  eventType: 'OrderCreated',
  aggregateType: 'Order',
  aggregateId: 'o-1',
  payload: { total: 1 },
};

// Any replica set proves this: PoppyDB too discards an aborted transaction's writes (INFRA.md).
// What PoppyDB cannot prove (its change stream sees aborted writes) is the relay's concern and is
// tested there against real MongoDB only.
describeWith(['mongodb'], 'a failing @Transactional call writes nothing', () => {
  let ctx: WriteSideApp;

  beforeAll(async () => {
    ctx = await startWriteSideApp({ maxPayloadBytes: 1000 });
  });
  afterAll(async () => {
    await ctx?.close();
  });
  beforeEach(async () => {
    await ctx.connection.collection('orders').deleteMany({});
    await ctx.connection.collection('outbox').deleteMany({});
  });

  async function expectNothingWritten(): Promise<void> {
    expect(await ctx.orderIds()).toEqual([]);
    expect(await ctx.outbox()).toEqual([]);
  }

  it('a throwing body: neither the order nor its event, and the original error', async () => {
    const boom = new Error('payment declined');
    await expect(ctx.orders.createThenFail('o-1', boom)).rejects.toBe(boom);
    await expectNothingWritten();
  });

  it('an inner joined call that throws rolls back the outer writes and events too', async () => {
    await expect(ctx.orders.outerWithFailingInner('n')).rejects.toThrow('inner failed');
    await expectNothingWritten();
  });

  it.each<
    [string, Partial<OutboxEventInput> | Record<string, unknown>, new (...a: never[]) => Error]
  >([
    ['an eventType with a space', { eventType: 'Order Created' }, InvalidOutboxEventError],
    ['an empty aggregateType', { aggregateType: '' }, InvalidOutboxEventError],
    ['an aggregateId with a space', { aggregateId: 'o 1' }, InvalidOutboxEventError],
    ['a payload holding a function', { payload: { f: () => 1 } }, UnserializablePayloadError],
    ['a payload holding a BigInt', { payload: { n: 1n } }, UnserializablePayloadError],
    ['a payload holding NaN', { payload: { n: NaN } }, UnserializablePayloadError],
    ['an array payload', { payload: [1, 2] }, UnserializablePayloadError],
    ['a payload over maxPayloadBytes', { payload: { s: 'x'.repeat(2000) } }, PayloadTooLargeError],
    ['a reserved header', { headers: { ce_id: 'x' } }, InvalidOutboxEventError],
  ])('an event with %s: typed error, order and outbox untouched', async (_what, change, type) => {
    const bad = { ...good, ...change } as OutboxEventInput;
    const error = await ctx.orders.createWith('o-1', [good, bad]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(type);
    expect(error).toBeInstanceOf(InvalidOutboxEventError);
    await expectNothingWritten();
  });

  it('a circular payload: typed error, nothing written', async () => {
    const payload: Record<string, unknown> = {};
    payload.self = payload;
    await expect(ctx.orders.createWith('o-1', [{ ...good, payload }])).rejects.toThrow(
      UnserializablePayloadError,
    );
    await expectNothingWritten();
  });

  it('emitting outside any transaction is refused', () => {
    expect(() => ctx.app.get(OutboxEmitter).emit(good)).toThrow(OutboxTransactionRequiredError);
  });
});
