import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { currentHandlerScope, currentTenant, IdempotentHandler } from '../../lib';
import { createTopics, describeWith, uniqueName } from '../harness';
import {
  dropDatabase,
  eventMessage,
  send,
  sleep,
  startConsumerApp,
  waitFor,
  type ConsumerApp,
} from '../consumer/consumer-app.fixtures';

const PATTERN = 'TenantOrderPlaced';
const CONSUMER = 'tenants.orders';
const PROCESSED = 'outbox_processed_events';
const DEAD_LETTERS = 'outbox_consumer_dead_letters';
const seen: Array<{ eventId: string; tenant?: string; context?: string }> = [];

/** Writes into the event's tenant database, in the handler's transaction (native driver + session). */
@Controller()
class TenantOrders {
  static connection: () => ConsumerApp['connection'];

  @EventPattern(PATTERN)
  @IdempotentHandler({ consumer: CONSUMER })
  async onOrder(@Payload() p: { n: number }, @Ctx() ctx: KafkaContext) {
    const scope = currentHandlerScope();
    seen.push({ eventId: scope.eventId, tenant: scope.tenant, context: currentTenant() });
    const db = TenantOrders.connection().useDb(scope.tenant!, { useCache: true });
    await db.collection('ledger').insertOne(
      { eventId: scope.eventId, n: p.n, key: String(ctx.getMessage().key) },
      {
        session: scope.session,
      },
    );
  }
}

const message = (eventId: string, tenant: string | undefined, n: number) =>
  eventMessage(
    eventId,
    { n },
    {
      headers: { ce_type: PATTERN, ...(tenant ? { ce_tenant: tenant } : {}) },
    },
  );

describe.each([
  ['in batches', {}],
  ['one event at a time (consumer.batch.maxEvents 1)', { batch: { maxEvents: 1 } }],
])('tenants: OutboxKafkaServer applying %s', (_, consumerOptions) => {
  describeWith(['mongodb', 'kafka'], 'applies an event once per tenant', () => {
    const appDb = uniqueName('tc_app');
    const acme = uniqueName('tc_acme');
    const globex = uniqueName('tc_globex');
    const topic = uniqueName('tenant-orders');
    let app: ConsumerApp | undefined;

    beforeAll(() => createTopics([topic], 1), 60_000);
    afterAll(async () => {
      await app?.close();
      for (const db of [appDb, acme, globex]) await dropDatabase(db);
    }, 30_000);

    const docsIn = (db: string, collection: string) =>
      app!.connection.useDb(db, { useCache: true }).collection(collection).find({}).toArray();

    it('the same eventId for two tenants: applied once in each, records in each tenant database', async () => {
      seen.length = 0;
      await send(topic, [
        message('e-1', acme, 1),
        message('e-1', globex, 1),
        message('e-1', acme, 1), // a duplicate of acme's
        message('e-2', acme, 2),
        message('e-1', globex, 1), // a duplicate of globex's
        message('e-3', undefined, 3), // no ce_tenant
      ]);
      app = await startConsumerApp(appDb, [TenantOrders], consumerOptions, {
        outboxServerTopics: [topic],
        outbox: { tenants: { databases: [acme, globex] } },
      });
      TenantOrders.connection = () => app!.connection;
      await waitFor(
        async () =>
          (await docsIn(acme, 'ledger')).length === 2 &&
          (await docsIn(globex, 'ledger')).length === 1 &&
          (await docsIn(appDb, DEAD_LETTERS)).length === 1,
        60_000,
        'both tenants applied, the tenant-less event dead-lettered',
      );
      await sleep(1000);

      expect((await docsIn(acme, 'ledger')).map((d) => d.eventId).sort()).toEqual(['e-1', 'e-2']);
      expect((await docsIn(globex, 'ledger')).map((d) => d.eventId)).toEqual(['e-1']);
      const processed = async (db: string) =>
        (await docsIn(db, PROCESSED)).map((d) => `${d.consumer}/${d.eventId}`).sort();
      expect(await processed(acme)).toEqual([`${CONSUMER}/e-1`, `${CONSUMER}/e-2`]);
      expect(await processed(globex)).toEqual([`${CONSUMER}/e-1`]);
      expect(await processed(appDb)).toEqual([]);

      // The scope and the tenant context both said which tenant.
      for (const call of seen) expect(call.context).toBe(call.tenant);
      expect(
        seen
          .filter((c) => c.eventId === 'e-1')
          .map((c) => c.tenant)
          .sort(),
      ).toEqual([acme, globex].sort());

      const [letter] = await docsIn(appDb, DEAD_LETTERS);
      expect(letter).toMatchObject({
        consumer: CONSUMER,
        eventId: 'e-3',
        status: 'dead',
        reason: 'missing-tenant',
      });
      expect(seen.map((c) => c.eventId)).not.toContain('e-3');
    }, 120_000);
  });
});
