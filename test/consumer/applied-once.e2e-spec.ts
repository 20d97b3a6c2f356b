import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { IdempotentHandler } from '../../lib';
import { createTopics, describeWith, uniqueName } from '../harness';
import {
  dropDatabase,
  LedgerService,
  send,
  sleep,
  startConsumerApp,
  waitFor,
  type ConsumerApp,
} from './consumer-app.fixtures';

const PROCESSED = 'outbox_processed_events';
const DEAD_LETTERS = 'outbox_consumer_dead_letters';

const topics = {
  once: uniqueName('once'),
  flaky: uniqueName('flaky'),
  shared: uniqueName('shared'),
  bad: uniqueName('bad'),
};
const calls: Record<string, number> = {};
const count = (key: string) => (calls[key] = (calls[key] ?? 0) + 1);
const id = (ctx: KafkaContext) => String(ctx.getMessage().headers?.ce_id ?? '');

@Controller()
class OnceHandlers {
  constructor(private readonly ledger: LedgerService) {}

  @EventPattern(topics.once)
  @IdempotentHandler()
  async once(@Payload() payload: { n: number }, @Ctx() ctx: KafkaContext) {
    count(`once:${id(ctx)}`);
    await this.ledger.record('OnceHandlers.once', id(ctx), payload.n);
  }

  /** Writes, then fails on the first delivery of each event: that write must be rolled back. */
  @EventPattern(topics.flaky)
  @IdempotentHandler()
  async flaky(@Payload() payload: { n: number }, @Ctx() ctx: KafkaContext) {
    const n = count(`flaky:${id(ctx)}`);
    await this.ledger.record('OnceHandlers.flaky', id(ctx), payload.n);
    if (n === 1) throw new Error('first delivery fails');
  }

  @IdempotentHandler({ maxFailures: 2 })
  @EventPattern(topics.bad)
  async picky(@Payload() payload: { n: number; broken?: boolean }, @Ctx() ctx: KafkaContext) {
    count(`picky:${id(ctx)}`);
    if (payload.broken) throw new Error('cannot apply this one');
    await this.ledger.record('OnceHandlers.picky', id(ctx), payload.n);
  }
}

@Controller()
class BillingHandlers {
  constructor(private readonly ledger: LedgerService) {}

  @EventPattern(topics.shared)
  @IdempotentHandler({ consumer: 'billing' })
  async onOrder(@Payload() payload: { n: number }, @Ctx() ctx: KafkaContext) {
    await this.ledger.record('billing', id(ctx), payload.n);
  }
}

@Controller()
class ShippingHandlers {
  constructor(private readonly ledger: LedgerService) {}

  @EventPattern(topics.shared)
  @IdempotentHandler({ consumer: 'shipping' })
  async onOrder(@Payload() payload: { n: number }, @Ctx() ctx: KafkaContext) {
    await this.ledger.record('shipping', id(ctx), payload.n);
  }
}

const event = (eventId: string, n: number) => ({
  value: JSON.stringify({ n }),
  headers: { ce_id: eventId, ce_type: 'OrderPlaced' },
});

describeWith(
  ['mongodb', 'kafka'],
  '@IdempotentHandler applies each event once per consumer',
  () => {
    const db = uniqueName('consumer');
    let consumer: ConsumerApp | undefined;

    beforeAll(async () => {
      await createTopics(Object.values(topics), 1);
    }, 60000);

    afterEach(async () => {
      await consumer?.close();
      consumer = undefined;
    }, 30000);

    afterAll(() => dropDatabase(db));

    const ledger = (consumerName: string, eventId?: string) =>
      consumer!.connection
        .collection('ledger')
        .countDocuments({ consumer: consumerName, ...(eventId ? { eventId } : {}) });

    it('the same event delivered 3 times: the side effect happens once', async () => {
      consumer = await startConsumerApp(db, [OnceHandlers]);
      await send(topics.once, [event('e-1', 1), event('e-1', 1), event('e-1', 1), event('e-2', 2)]);
      await waitFor(
        async () => (await ledger('OnceHandlers.once', 'e-2')) === 1,
        45_000,
        'e-2 applied',
      );
      await sleep(500);
      expect(await ledger('OnceHandlers.once', 'e-1')).toBe(1);
      expect(calls['once:e-1']).toBe(1);
      const processed = await consumer.connection
        .collection(PROCESSED)
        .find(
          { consumer: 'OnceHandlers.once' },
          { projection: { _id: 0, consumer: 1, eventId: 1 } },
        )
        .toArray();
      expect(processed.map((p) => p.eventId).sort()).toEqual(['e-1', 'e-2']);
    }, 120000);

    it('a handler that fails once is retried and applied once; the failed attempt left nothing', async () => {
      consumer = await startConsumerApp(db, [OnceHandlers]);
      await send(topics.flaky, [event('f-1', 1)]);
      await waitFor(
        async () => (await ledger('OnceHandlers.flaky', 'f-1')) === 1,
        45_000,
        'f-1 applied',
      );
      await sleep(500);
      expect(calls['flaky:f-1']).toBe(2);
      expect(await ledger('OnceHandlers.flaky', 'f-1')).toBe(1);
      expect(
        await consumer.connection
          .collection(PROCESSED)
          .countDocuments({ consumer: 'OnceHandlers.flaky', eventId: 'f-1' }),
      ).toBe(1);
      // The failure record was removed once the event succeeded.
      expect(
        await consumer.connection.collection(DEAD_LETTERS).countDocuments({ eventId: 'f-1' }),
      ).toBe(0);
    }, 120000);

    it('two consumers (names and groups) of one event each apply it once', async () => {
      await send(topics.shared, [event('s-1', 1), event('s-1', 1)]);
      consumer = await startConsumerApp(db, [BillingHandlers]);
      await waitFor(async () => (await ledger('billing', 's-1')) === 1, 45_000, 'billing applied');
      await consumer.close();
      // Another service, its own group: the event id alone must not make it skip the event.
      consumer = await startConsumerApp(db, [ShippingHandlers]);
      await waitFor(
        async () => (await ledger('shipping', 's-1')) === 1,
        45_000,
        'shipping applied',
      );
      await sleep(500);
      expect(await ledger('billing', 's-1')).toBe(1);
      expect(await ledger('shipping', 's-1')).toBe(1);
    }, 120000);

    it('malformed and failing messages are dead-lettered; later good messages are applied', async () => {
      consumer = await startConsumerApp(db, [OnceHandlers]);
      await send(topics.bad, [
        { value: JSON.stringify({ n: 1 }) }, // no event id
        { value: '{"n":', headers: { ce_id: 'b-2' } },
        { value: '{"n":3,"__proto__":{"polluted":true}}', headers: { ce_id: 'b-3' } },
        {
          // Plain data under the shared payload rule: applied, pollutes nothing.
          value: '{"n":4,"constructor":{"prototype":{"polluted":true}}}',
          headers: { ce_id: 'b-4' },
        },
        { value: JSON.stringify({ n: 5, broken: true }), headers: { ce_id: 'b-5' } },
        event('b-6', 6),
      ]);
      await waitFor(
        async () => (await ledger('OnceHandlers.picky', 'b-6')) === 1,
        45_000,
        'b-6 applied',
      );
      const dead = await consumer.connection
        .collection(DEAD_LETTERS)
        .find({ consumer: 'OnceHandlers.picky' })
        .sort({ offset: 1 })
        .toArray();
      expect(dead.map((d) => [d.eventId, d.reason, d.status])).toEqual([
        [null, 'missing-event-id', 'dead'],
        ['b-2', 'invalid-json', 'dead'],
        ['b-3', 'forbidden-key', 'dead'],
        ['b-5', 'max-failures', 'dead'],
      ]);
      expect(dead[1]).toMatchObject({ value: '{"n":', valueBytes: 5, attempts: 0 });
      expect(dead[3]).toMatchObject({ attempts: 2, lastError: 'Error: cannot apply this one' });
      expect(
        dead[3].errors.map((e: { attempt: number; error: string }) => [e.attempt, e.error]),
      ).toEqual([
        [1, 'Error: cannot apply this one'],
        [2, 'Error: cannot apply this one'],
      ]);
      expect(dead[0].headers).toEqual([]);
      expect(calls['picky:b-5']).toBe(2);
      expect(calls['picky:b-2']).toBeUndefined();
      expect(await ledger('OnceHandlers.picky', 'b-4')).toBe(1);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(
        await consumer.connection.collection(PROCESSED).countDocuments({ eventId: 'b-5' }),
      ).toBe(0);
    }, 120000);
  },
);
