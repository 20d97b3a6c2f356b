import type { MongoClient } from 'mongodb';
import { createTopics, describeWith, readTopic, uniqueName, waitFor } from '../harness';
import { testRelayOptions } from '../relay/support/relay-app';
import {
  orderPerTenantAggregate,
  startTenantRelay,
  tenantWriter,
  writeTenantEvents,
  type TenantRelayApp,
} from './support/tenant-relay';

jest.setTimeout(240_000);

const AGGREGATES = ['a1', 'a2'];

for (const stream of ['cluster', 'per-database'] as const) {
  describeWith(
    ['mongodb', 'kafka'],
    `one relay over 20 tenant databases (${stream} stream)`,
    () => {
      const base = uniqueName(`tr-${stream === 'cluster' ? 'c' : 'p'}`).replace(/-/g, '_');
      const appDb = `${base}_app`;
      const tenants = Array.from({ length: 20 }, (_, i) => `t${String(i).padStart(2, '0')}`);
      const databaseOf = (tenant: string) => `${base}_${tenant}`;
      const listed = tenants.map(databaseOf);
      const prefix = `${base}.`;
      const topic = `${prefix}Order`;
      const options = testRelayOptions(prefix);
      let writer: MongoClient;
      let relay: TenantRelayApp | undefined;
      /** Events written per tenant: n in [0, written) of each aggregate. */
      const written = new Map<string, number>();

      const write = async (tenant: string, to: number) => {
        await writeTenantEvents(
          writer,
          databaseOf(tenant),
          tenant,
          AGGREGATES,
          written.get(tenant) ?? 0,
          to,
        );
        written.set(tenant, to);
      };
      const expected = () =>
        [...written.values()].reduce((sum, n) => sum + n * AGGREGATES.length, 0);

      /** Every event written so far is on the topic, once per tenant and aggregate, in order. */
      const expectAllPublishedInOrder = async () => {
        for (const tenant of written.keys()) {
          const outbox = writer.db(databaseOf(tenant)).collection('outbox');
          await waitFor(
            async () => (await outbox.countDocuments({ status: 'pending', tenant })) === 0,
            60_000,
            `every event of ${tenant} published`,
          );
        }
        // Everything is marked published: what Kafka holds now is all (duplicates included).
        const records = await readTopic(topic, {
          count: Number.MAX_SAFE_INTEGER,
          timeoutMs: 20_000,
        });
        expect(records.length).toBeGreaterThanOrEqual(expected());
        const order = orderPerTenantAggregate(records);
        for (const [tenant, n] of written) {
          for (const aggregate of AGGREGATES) {
            const seen = order.get(`${tenant}/${aggregate}`) ?? [];
            // At least once, in order: a duplicate only ever repeats a suffix after a restart.
            expect([...new Set(seen)]).toEqual([...Array(n).keys()]);
            expect(seen.slice(0, n)).toEqual([...Array(n).keys()]);
          }
        }
        expect(records.every((record) => record.headers.ce_tenant !== undefined)).toBe(true);
      };

      beforeAll(async () => {
        await createTopics([topic]);
        writer = await tenantWriter();
      });

      afterAll(async () => {
        await relay?.close();
        for (const database of [appDb, ...listed]) {
          await writer
            .db(database)
            .dropDatabase()
            .catch(() => undefined);
        }
        await writer.close();
      });

      it('publishes the backlog and new events of every tenant database, in aggregate order, with ce_tenant', async () => {
        for (const tenant of tenants) await write(tenant, 3);
        relay = await startTenantRelay(appDb, options, { databases: () => listed, stream });
        for (const tenant of tenants) await write(tenant, 6);
        await expectAllPublishedInOrder();
        // A lease renewal that came late (a loaded machine) starts a new term: wait for one.
        await waitFor(async () => relay!.relay.status().tenants !== undefined, 20_000, 'a term');
        const status = relay.relay.status();
        expect(status.tenants?.map((one) => one.database)).toEqual([...listed].sort());
        expect(status.tenants?.every((one) => one.state === 'followed')).toBe(true);
      });
    },
  );
}
