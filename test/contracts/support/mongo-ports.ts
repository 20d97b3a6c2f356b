import type { Connection, mongo } from 'mongoose';
import { MongoChangeSource } from '../../../lib/relay/mongo/mongo-change.source';
import type { OutboxDeadLetter } from '../../../lib/documents/dead-letter.document';
import type { OutboxDoc } from '../../../lib/documents/outbox-event.document';
import { MongoOutboxRelayStore } from '../../../lib/relay/mongo/mongo-outbox-relay.store';
import { MongoRelayPartitions } from '../../../lib/relay/mongo/mongo-relay-partitions';
import { MongoRelayStateStore } from '../../../lib/relay/mongo/mongo-relay-state.store';
import { relayCollection } from '../../../lib/relay/mongo/relay-collections';
import type { ResumeToken } from '../../../lib/relay/ports/change-source';
import { OUTBOX_DEFAULT_COLLECTIONS } from '../../../lib/common/outbox-storage.options';
import { systemClock } from '../../../lib/relay/ports/relay-clock';
import { nestRelayLoggers } from '../../../lib/relay/ports/relay-logger';
import { MongoTenantPorts } from '../../../lib/relay/tenants/mongo-tenant.ports';
import { testServers } from '../../harness';
import type { ChangeSourceFixture } from '../change-source.contract';
import type { OutboxStoreFixture } from '../outbox-relay.store.contract';
import type { PartitionsFixture } from '../relay-partitions.store.contract';
import type { StateStoreFixture } from '../relay-state.store.contract';
import { tenantContractRelay } from '../tenant-ports.contract';
import type { TenantPortsFixture } from '../tenant-ports.contract';
import { contractEvent } from './contract-events';

let fixtures = 0;

/** Collection names of their own for one fixture (the suite's database is shared by its cases). */
export function freshCollections() {
  fixtures++;
  return {
    outbox: `outbox_${fixtures}`,
    deadLetters: `outbox_dead_letters_${fixtures}`,
    relayState: `outbox_relay_state_${fixtures}`,
  };
}

/** `MongoOutboxRelayStore` (lib/relay/mongo) on the run's MongoDB. */
export function mongoOutboxStoreFixture(connection: Connection): OutboxStoreFixture {
  const db = connection.db!;
  const names = freshCollections();
  const outbox = db.collection<OutboxDoc>(names.outbox);
  return {
    store: (range) => new MongoOutboxRelayStore(db, names, range),
    insert: async (events) => {
      for (const event of events) await outbox.insertOne({ ...event } as OutboxDoc);
    },
    stored: async (event) => (await outbox.findOne({ _id: event._id })) ?? undefined,
    deadLetters: (eventId) =>
      db
        .collection<OutboxDeadLetter>(names.deadLetters)
        .find({ eventId }, { projection: { _id: 0 } })
        .toArray() as Promise<OutboxDeadLetter[]>,
  };
}

/** `MongoRelayStateStore` (lib/relay/mongo) on the run's MongoDB. */
export function mongoStateStoreFixture(connection: Connection): StateStoreFixture {
  const names = freshCollections();
  return {
    store: () => new MongoRelayStateStore(connection.db!, names.relayState, 'contract'),
    token: (n) => ({ _data: `contract-token-${n}` }),
  };
}

/** `MongoRelayPartitions` (lib/relay/mongo) on the run's MongoDB. */
export function mongoPartitionsFixture(connection: Connection): PartitionsFixture {
  const db = connection.db!;
  const collections = freshCollections();
  const outbox = db.collection<OutboxDoc>(collections.outbox);
  return {
    ports: () =>
      new MongoRelayPartitions(db, {
        collections,
        relayName: 'contract',
        batchSize: 10,
        idleMs: 200,
      }),
    single: () => new MongoRelayStateStore(db, collections.relayState, 'contract'),
    insert: async (events) => {
      for (const event of events) await outbox.insertOne({ ...event } as OutboxDoc);
    },
    stored: async (event) => (await outbox.findOne({ _id: event._id })) ?? undefined,
  };
}

/** `MongoChangeSource` (lib/relay/mongo) on the run's MongoDB. */
export function mongoChangeSourceFixture(connection: Connection): ChangeSourceFixture {
  const db = connection.db!;
  const name = freshCollections().outbox;
  const outbox = relayCollection<OutboxDoc>(db, name);
  return {
    source: (range) => new MongoChangeSource(outbox, { batchSize: 10, idleMs: 300 }, range),
    insert: async (events) => {
      for (const event of events) await outbox.insertOne({ ...event } as OutboxDoc);
    },
    lostPosition: () => lostPosition(outbox),
    dropCollection: async () => {
      await outbox.drop();
    },
  };
}

/**
 * A resume token the server can never resume from. PoppyDB keeps a history of its own tokens
 * (`{ _data: <sequence number in hex> }`); for one beyond its newest it opens the stream and
 * ends it at the first getMore (cursor id 0, no error code: measured), which the change source
 * takes as a lost position, so on PoppyDB this case does not show the 286 classification
 * (lib/relay/mongo/mongo-change.source.spec.ts does, with the driver's error). On MongoDB, a
 * real token whose cluster time is rewritten to 1970, long before the oplog's first entry:
 * 286 ChangeStreamHistoryLost.
 */
async function lostPosition(outbox: mongo.Collection<OutboxDoc>): Promise<ResumeToken> {
  if (testServers().mongoKind === 'poppydb') return { _data: '0000FFFFFFFFFFFF' };
  const stream = outbox.watch([], { maxAwaitTimeMS: 300 });
  try {
    await stream.tryNext();
    await outbox.insertOne(contractEvent('lost') as OutboxDoc);
    const change = await stream.tryNext();
    const data = (change?._id as { _data?: string } | undefined)?._data;
    if (!data) throw new Error('no resume token to age');
    // `82` (a timestamp follows), then 8 bytes of cluster time.
    return { _data: `${data.slice(0, 2)}0000000100000001${data.slice(18)}` };
  } finally {
    await stream.close();
  }
}

/**
 * `MongoTenantPorts` (lib/relay/tenants) with the cluster-wide stream, on tenant databases of
 * the run's MongoDB named after the suite's own (dropped by `close`).
 */
export function mongoTenantPortsFixture(connection: Connection): TenantPortsFixture {
  const appDb = connection.db!;
  const client = connection.getClient();
  const collections = { ...OUTBOX_DEFAULT_COLLECTIONS, ...freshCollections() };
  const fixture = collections.outbox; // unique per fixture
  const created: string[] = [];
  return {
    ports: (databases) =>
      new MongoTenantPorts({
        client,
        appDb,
        collections,
        tenants: { databases, stream: 'cluster' },
        relay: tenantContractRelay(200),
        clock: systemClock,
        random: Math.random,
        logger: nestRelayLoggers('RelayTenants'),
      }),
    names: (count) => {
      const names = Array.from(
        { length: count },
        (_, n) => `${appDb.databaseName}_${fixture}_${created.length + n}`,
      );
      created.push(...names);
      return names;
    },
    insert: async (database, events) => {
      const outbox = client.db(database).collection<OutboxDoc>(collections.outbox);
      for (const event of events) await outbox.insertOne({ ...event } as OutboxDoc);
    },
    drop: async (database) => {
      await client.db(database).dropDatabase();
    },
    waitFor: async (done, ms) => {
      const until = Date.now() + ms;
      while (!done() && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    },
    close: async () => {
      for (const database of created.splice(0)) {
        await client
          .db(database)
          .dropDatabase()
          .catch(() => undefined);
      }
    },
  };
}
