import { Logger } from '@nestjs/common';
import { getConnectionToken, MongooseModule } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import { MongoClient, ObjectId } from 'mongodb';
import type { Connection } from 'mongoose';
import { OutboxModule, OutboxRelay, OutboxRelayMetrics, type RelayOptions } from '../../../lib';
import { eventSlot } from '../../../lib/events/event-slot';
import type { TenantDatabases } from '../../../lib/tenants/tenants.options';
import { mongoUriFor, testServers, uniqueName } from '../../harness';
import { testLogLevels } from '../../relay/support/relay-app';

export interface TenantRelayApp {
  relay: OutboxRelay;
  metrics: OutboxRelayMetrics;
  connection: Connection;
  close(): Promise<void>;
}

/** A relay app over tenant databases, configured as a user does (`OutboxModule.forRoot({ tenants })`). */
export async function startTenantRelay(
  appDb: string,
  relay: RelayOptions,
  tenants: { databases: TenantDatabases; stream: 'cluster' | 'per-database' },
): Promise<TenantRelayApp> {
  Logger.overrideLogger(testLogLevels());
  const moduleRef = await Test.createTestingModule({
    imports: [
      MongooseModule.forRoot(mongoUriFor(appDb), { connectionName: 'relay' }),
      OutboxModule.forRoot({ connectionName: 'relay', relay, tenants }),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: testLogLevels() });
  await app.init();
  return {
    relay: app.get(OutboxRelay),
    metrics: app.get(OutboxRelayMetrics),
    connection: app.get<Connection>(getConnectionToken('relay')),
    close: () => app.close(),
  };
}

/** A client for writing tenant events directly (one connection: PoppyDB binds a transaction to it). */
export async function tenantWriter(): Promise<MongoClient> {
  const url = new URL(mongoUriFor('admin'));
  if (testServers().mongoKind === 'poppydb') url.searchParams.set('maxPoolSize', '1');
  return new MongoClient(url.toString()).connect();
}

/** `tenant`'s events `from..to-1` of each aggregate, written in one transaction into `database`'s outbox. */
export async function writeTenantEvents(
  client: MongoClient,
  database: string,
  tenant: string,
  aggregates: readonly string[],
  from: number,
  to: number,
): Promise<void> {
  const docs: Record<string, unknown>[] = [];
  for (let n = from; n < to; n++) {
    for (const aggregateId of aggregates) {
      docs.push({
        _id: new ObjectId(),
        eventId: uniqueName(`evt-${tenant}-${aggregateId}-${n}`),
        eventType: 'OrderPlaced',
        aggregateType: 'Order',
        aggregateId,
        payload: { tenant, aggregateId, n },
        occurredAt: new Date(),
        status: 'pending',
        attempts: 0,
        slot: eventSlot('Order', aggregateId),
        tenant,
      });
    }
  }
  const session = client.startSession();
  try {
    await session.withTransaction(() =>
      client.db(database).collection('outbox').insertMany(docs, { session }),
    );
  } finally {
    await session.endSession();
  }
}

/** Per (tenant, aggregate): the `n`s in the order the records came (one Kafka partition each). */
export function orderPerTenantAggregate(
  records: ReadonlyArray<{ value: string | null; headers: Record<string, string> }>,
): Map<string, number[]> {
  const seen = new Map<string, number[]>();
  for (const record of records) {
    const payload = JSON.parse(record.value ?? '{}') as { aggregateId: string; n: number };
    const key = `${record.headers.ce_tenant}/${payload.aggregateId}`;
    seen.set(key, [...(seen.get(key) ?? []), payload.n]);
  }
  return seen;
}
