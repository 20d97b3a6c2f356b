import { OutboxTenants, runInTenant } from '../../lib';
import { describeWith, uniqueName } from '../harness';
import { placeOrder, startTenantApp, type TenantApp } from './tenant-app.fixtures';

const acme = uniqueName('t_acme');
const globex = uniqueName('t_globex');
const shared = uniqueName('t_shared');
/** Tenants `small-*` share one database; every other tenant has its own, named like it. */
const databaseOf = (tenant: string) => (tenant.startsWith('small-') ? shared : tenant);

async function docs(ctx: TenantApp, db: string, collection: string) {
  return ctx
    .db(db)
    .collection(collection)
    .find({}, { projection: { _id: 1, tenant: 1, aggregateId: 1, eventType: 1, status: 1 } })
    .sort({ _id: 1 })
    .toArray();
}

describeWith(['mongodb'], 'tenants: each request writes into its tenant database', () => {
  let ctx: TenantApp;

  beforeAll(async () => {
    ctx = await startTenantApp({ databases: [acme, globex, shared], databaseOf });
  }, 60_000);
  afterAll(async () => {
    await ctx?.dropAndClose();
  });

  it("a request's order and its event land together in its tenant's database", async () => {
    expect(await placeOrder(ctx.url, acme, { tenant: acme, id: 'o-1', total: 10 })).toBe(201);
    expect(await placeOrder(ctx.url, globex, { tenant: globex, id: 'o-2', total: 20 })).toBe(201);

    expect(await docs(ctx, acme, 'orders')).toEqual([{ _id: 'o-1' }]);
    expect(await docs(ctx, acme, 'outbox')).toEqual([
      expect.objectContaining({ tenant: acme, aggregateId: 'o-1', eventType: 'OrderPlaced' }),
    ]);
    expect(await docs(ctx, globex, 'orders')).toEqual([{ _id: 'o-2' }]);
    expect(await docs(ctx, globex, 'outbox')).toEqual([
      expect.objectContaining({ tenant: globex, aggregateId: 'o-2' }),
    ]);
    // Nothing in the app's own database.
    expect(await ctx.connection.collection('outbox').countDocuments()).toBe(0);
  });

  it('the outbox indexes exist in each listed tenant database (created at bootstrap)', async () => {
    const names = (await ctx.db(globex).collection('outbox').indexes()).map((i) => i.name);
    expect(names).toEqual(expect.arrayContaining(['outbox_event_id_unique']));
  });

  it('a request without a tenant fails and writes nothing anywhere', async () => {
    expect(await placeOrder(ctx.url, undefined, { tenant: acme, id: 'o-3', total: 1 })).toBe(500);
    expect((await docs(ctx, acme, 'orders')).map((o) => o._id)).not.toContain('o-3');
    for (const db of [acme, globex, shared]) {
      expect((await docs(ctx, db, 'outbox')).map((e) => e.aggregateId)).not.toContain('o-3');
    }
  });

  it('two tenants sharing a database: one outbox, each event with its own tenant', async () => {
    expect(await placeOrder(ctx.url, 'small-1', { tenant: 'small-1', id: 's-1', total: 1 })).toBe(
      201,
    );
    expect(await placeOrder(ctx.url, 'small-2', { tenant: 'small-2', id: 's-2', total: 2 })).toBe(
      201,
    );
    const events = await docs(ctx, shared, 'outbox');
    expect(events.map((e) => [e.tenant, e.aggregateId])).toEqual([
      ['small-1', 's-1'],
      ['small-2', 's-2'],
    ]);
  });

  it('ensureTenantIndexes creates the indexes of a tenant onboarded at runtime', async () => {
    const late = uniqueName('t_late');
    try {
      await ctx.app.get(OutboxTenants).ensureTenantIndexes(late);
      const outbox = (await ctx.db(late).collection('outbox').indexes()).map((i) => i.name);
      const processed = (await ctx.db(late).collection('outbox_processed_events').indexes()).map(
        (i) => i.name,
      );
      expect(outbox).toEqual(expect.arrayContaining(['outbox_event_id_unique']));
      expect(processed.length).toBeGreaterThan(1);
    } finally {
      await ctx
        .db(late)
        .dropDatabase()
        .catch(() => {});
    }
  });
});

// PoppyDB discards an aborted transaction's writes, in every database the transaction touched:
// this runs on both servers (a real mongod does it by the definition of its transactions).
describeWith(
  ['mongodb'],
  'tenants: an aborted transaction writes nothing in either database',
  () => {
    let ctx: TenantApp;
    const a = uniqueName('t_abort_a');
    const b = uniqueName('t_abort_b');

    beforeAll(async () => {
      ctx = await startTenantApp({ databases: [a, b] });
      // B's outbox refuses a second event of aggregate 'taken': B's insert fails at commit time,
      // after A's rows were inserted in the same transaction.
      await ctx.db(b).collection('outbox').createIndex({ aggregateId: 1 }, { unique: true });
      await ctx.db(b).collection('outbox').insertOne({ aggregateId: 'taken', tenant: b });
    }, 60_000);
    afterAll(async () => {
      await ctx?.dropAndClose();
    });

    it('a method that throws: neither the order nor the event', async () => {
      expect(await placeOrder(ctx.url, a, { tenant: a, id: 'x-1', total: 1, fail: true })).toBe(
        500,
      );
      expect(await docs(ctx, a, 'orders')).toEqual([]);
      expect(await docs(ctx, a, 'outbox')).toEqual([]);
    });

    it("one tenant's outbox insert fails: the other tenant's order and event are rolled back", async () => {
      await expect(
        runInTenant(a, () => ctx.orders.placeForTwo(a, 'x-2', b, 'taken')),
      ).rejects.toMatchObject({ code: 11000 });
      expect(await docs(ctx, a, 'orders')).toEqual([]);
      expect(await docs(ctx, a, 'outbox')).toEqual([]);
      expect((await docs(ctx, b, 'outbox')).length).toBe(1);
    });

    it('the same transaction with both inserts accepted commits in both databases', async () => {
      await runInTenant(a, () => ctx.orders.placeForTwo(a, 'x-3', b, 'free'));
      expect(await docs(ctx, a, 'orders')).toEqual([{ _id: 'x-3' }]);
      expect((await docs(ctx, a, 'outbox')).map((e) => [e.tenant, e.aggregateId])).toEqual([
        [a, 'x-3'],
      ]);
      expect((await docs(ctx, b, 'outbox')).map((e) => [e.tenant, e.aggregateId])).toEqual([
        [b, 'taken'],
        [b, 'free'],
      ]);
    });
  },
);

// A cancel is an update pipeline on the server's clock ($$NOW): PoppyDB evaluates neither, so
// this needs a real mongod (as test/operations/scheduled-cli.e2e-spec.ts's cancels).
describeWith(['real-mongodb'], 'tenants: a scheduled event cancelled in a non-first tenant', () => {
  let ctx: TenantApp;

  beforeAll(async () => {
    ctx = await startTenantApp({ databases: [acme, globex] });
  }, 60_000);
  afterAll(async () => {
    await ctx?.dropAndClose();
  });

  it("a scheduled event is cancelled in its tenant's database (a non-first tenant)", async () => {
    const eventId = await runInTenant(globex, () =>
      ctx.orders.remind('o-9', new Date(Date.now() + 3_600_000)),
    );
    expect(await runInTenant(acme, () => ctx.orders.cancel(eventId))).toMatchObject({
      outcome: 'not-found',
    });
    expect(await runInTenant(globex, () => ctx.orders.cancel(eventId))).toMatchObject({
      outcome: 'cancelled',
    });
    const [event] = await ctx.db(globex).collection('outbox').find({ eventId }).toArray();
    expect(event).toMatchObject({ tenant: globex, status: 'cancelled' });
  });
});
