import { OutboxConsumerDeadLetters, OutboxDeadLetters } from '../../lib';
import { runCli } from '../../lib/cli/run-cli';
import { describeWith, mongoUriFor, uniqueName } from '../harness';
import { startTenantApp, type TenantApp } from './tenant-app.fixtures';

const HOUR = 3_600_000;
const acme = uniqueName('to_acme');
const globex = uniqueName('to_globex');
const shared = uniqueName('to_shared');
const databaseOf = (tenant: string) => (tenant.startsWith('small-') ? shared : tenant);

/** A relay dead letter as the relay writes it: the outbox document's fields, `tenant` included. */
const letter = (eventId: string, tenant: string) => ({
  eventId,
  eventType: 'OrderPlaced',
  aggregateType: 'Order',
  aggregateId: `o-${eventId}`,
  payload: { eventId },
  occurredAt: new Date(),
  tenant,
  outboxId: null,
  reason: 'rejected',
  attempts: 1,
  lastError: 'MESSAGE_TOO_LARGE',
  errors: [],
  deadLetteredAt: new Date(),
});

const scheduled = (eventId: string, tenant: string, dueInMs: number) => ({
  eventId,
  eventType: 'PaymentDue',
  aggregateType: 'Order',
  aggregateId: `o-${eventId}`,
  payload: {},
  tenant,
  status: 'pending',
  attempts: 0,
  occurredAt: new Date(),
  availableAt: new Date(Date.now() + dueInMs),
});

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(
    [...args, '--uri', mongoUriFor(uniqueName('to_cli'))],
    {},
    {
      out: (line) => out.push(line),
      err: (line) => err.push(line),
      ask: () => Promise.resolve('y'),
    },
  );
  return { code, out, err };
}

describeWith(
  ['mongodb'],
  'tenants: dead letters and scheduled events of a non-first tenant',
  () => {
    let ctx: TenantApp;

    beforeAll(async () => {
      ctx = await startTenantApp({ databases: [acme, globex, shared], databaseOf });
      await ctx.db(acme).collection('outbox_dead_letters').insertOne(letter('a-1', acme));
      await ctx.db(globex).collection('outbox_dead_letters').insertOne(letter('g-1', globex));
      await ctx
        .db(shared)
        .collection('outbox_dead_letters')
        .insertMany([letter('s-1', 'small-1'), letter('s-2', 'small-2')]);
      await ctx
        .db(globex)
        .collection('outbox')
        .insertMany([scheduled('gs-1', globex, 2 * HOUR), scheduled('gs-2', globex, 3 * HOUR)]);
      await ctx
        .db(shared)
        .collection('outbox')
        .insertOne(scheduled('ss-1', 'small-1', HOUR));
    }, 60_000);
    afterAll(async () => {
      await ctx?.dropAndClose();
    });

    it("OutboxDeadLetters.forTenant: lists and requeues only that tenant's letters, into its outbox", async () => {
      const deadLetters = ctx.app.get(OutboxDeadLetters);
      expect((await deadLetters.forTenant(globex).list()).map((l) => l.eventId)).toEqual(['g-1']);
      expect(await deadLetters.forTenant('small-2').count()).toBe(1);
      // The app's own database has none: nothing runs only in a "main" database.
      expect(await deadLetters.count()).toBe(0);

      const result = await deadLetters.forTenant(globex).requeueMany();
      expect(result).toMatchObject({ requeued: 1, eventIds: ['g-1'], failed: [] });
      const [event] = await ctx.db(globex).collection('outbox').find({ eventId: 'g-1' }).toArray();
      expect(event).toMatchObject({ tenant: globex, status: 'pending', attempts: 0 });
      expect(await ctx.db(globex).collection('outbox_dead_letters').countDocuments()).toBe(0);
      expect(await ctx.db(acme).collection('outbox_dead_letters').countDocuments()).toBe(1);
    });

    it('requeue of one tenant in a shared database leaves the other tenant alone', async () => {
      await ctx.app.get(OutboxDeadLetters).forTenant('small-2').requeue('s-2');
      const left = await ctx.db(shared).collection('outbox_dead_letters').find().toArray();
      expect(left.map((l) => l.eventId)).toEqual(['s-1']);
      await expect(
        ctx.app.get(OutboxDeadLetters).forTenant('small-2').requeue('s-1'),
      ).rejects.toThrow(/No dead-lettered event s-1/);
    });

    it('OutboxConsumerDeadLetters.forTenant reads the tenant database', async () => {
      await ctx
        .db(acme)
        .collection('outbox_consumer_dead_letters')
        .insertOne({
          consumer: 'billing',
          eventId: 'c-1',
          status: 'dead',
          reason: 'max-failures',
          headers: [{ key: 'ce_tenant', value: acme }],
          deadLetteredAt: new Date(),
        });
      const consumers = ctx.app.get(OutboxConsumerDeadLetters);
      expect((await consumers.forTenant(acme).list()).map((l) => l.eventId)).toEqual(['c-1']);
      expect(await consumers.forTenant(globex).count()).toBe(0);
    });

    it('the CLI: dead-letters list and requeue with --tenant', async () => {
      const listed = await cli(['dead-letters', 'list', '--tenant', acme]);
      expect(listed.code).toBe(0);
      expect(listed.out.join('\n')).toMatch(/a-1/);
      expect(listed.out.at(-1)).toBe('1 dead letter(s)');

      const requeued = await cli(['dead-letters', 'requeue', '--tenant', acme, '--all']);
      expect(requeued.code).toBe(0);
      expect(
        await ctx.db(acme).collection('outbox').countDocuments({ eventId: 'a-1', tenant: acme }),
      ).toBe(1);

      const other = await cli([
        'dead-letters',
        'count',
        '--tenant',
        'small-1',
        '--tenant-database',
        shared,
      ]);
      expect(other.out).toEqual(['1']);
    });

    it('the CLI: scheduled list and cancel --dry-run with --tenant (another tenant cannot cancel it)', async () => {
      const listed = await cli(['scheduled', 'list', '--tenant', globex]);
      expect(listed.code).toBe(0);
      expect(listed.out.at(-1)).toMatch(/^2 scheduled event\(s\)/);

      const foreign = await cli([
        'scheduled',
        'cancel',
        '--tenant',
        'small-1',
        '--tenant-database',
        globex,
        '--event-id',
        'gs-1',
      ]);
      expect(foreign.code).toBe(1);
      expect(foreign.err.join('\n')).toMatch(/gs-1 {2}not-found/);

      // The cancel itself is an update pipeline on the server clock: a real mongod's (see
      // test/operations/scheduled-cli.e2e-spec.ts); the dry run finds the event in its tenant.
      const dryRun = await cli([
        'scheduled',
        'cancel',
        '--tenant',
        globex,
        '--event-id',
        'gs-1',
        '--dry-run',
      ]);
      expect(dryRun.code).toBe(0);
      expect(dryRun.out.join('\n')).toMatch(/gs-1 {2}would-cancel/);
    });
  },
);
