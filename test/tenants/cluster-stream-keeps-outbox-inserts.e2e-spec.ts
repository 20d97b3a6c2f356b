import type { MongoClient } from 'mongodb';
import type { ChangeCursor } from '../../lib/relay/ports/change-source';
import { partitionOfSlot, slotsOfPartition } from '../../lib/relay/ports/partition-layout';
import { MongoClusterChangeSource } from '../../lib/relay/tenants/mongo-cluster-change.source';
import { contractEvent } from '../contracts/support/contract-events';
import { describeWith, uniqueName } from '../harness';
import { tenantWriter } from './support/tenant-relay';

jest.setTimeout(60_000);

/**
 * The cluster-wide stream's `$match` names the outbox collections of the followed databases;
 * the relay keeps only those inserts itself too (`StreamScope`), whatever the server's filter
 * lets through. PoppyDB's does let other namespaces through (a `$match` of several fields is
 * applied by its `operationType` only): there a relay state document of the app database was
 * taken for an event of a partition, failed its slot, and the stream's opening failed on it
 * again at every retry, from the same position. On a real mongod the server filters them first.
 */
describeWith(['mongodb'], 'the cluster-wide stream over tenant databases', () => {
  const base = uniqueName('nsk').replace(/-/g, '_');
  const followed = `${base}_t1`;
  const other = `${base}_t2`;
  let client: MongoClient;

  beforeAll(async () => {
    client = await tenantWriter();
  });

  afterAll(async () => {
    for (const database of [followed, other, `${base}_app`])
      await client
        .db(database)
        .dropDatabase()
        .catch(() => undefined);
    await client.close();
  });

  /** Reads `cursor` until `eventId` came, then twice more: every event id it gave. */
  async function readPast(cursor: ChangeCursor, eventId: string): Promise<string[]> {
    const got: string[] = [];
    for (let read = 0; read < 40 && !got.includes(eventId); read++) {
      got.push(...(await cursor.next(10)).changes.map((change) => change.event.eventId));
    }
    for (let read = 0; read < 2; read++) {
      got.push(...(await cursor.next(10)).changes.map((change) => change.event.eventId));
    }
    return got;
  }

  for (const partitioned of [false, true]) {
    it(`keeps only the outbox inserts of the databases it follows${partitioned ? ', narrowed to a partition' : ''}`, async () => {
      const { _id: _ignored, ...event } = contractEvent('order-1');
      const range = partitioned ? slotsOfPartition(partitionOfSlot(event.slot!, 2), 2) : undefined;
      const source = new MongoClusterChangeSource(
        client as never,
        'outbox',
        [followed],
        { batchSize: 10, idleMs: 200 },
        range,
      );
      const cursor = await source.open(undefined);
      try {
        // Not events (no slot, no aggregate), and an event of a database not followed.
        await client.db(followed).collection('orders').insertOne({ orderId: 'o-1' });
        await client
          .db(`${base}_app`)
          .collection('outbox_relay_state')
          .insertOne({ _id: `checkpoint:${partitioned}` as never, fencing: 3 });
        await client
          .db(other)
          .collection('outbox')
          .insertOne({ ...event, eventId: `${event.eventId}-elsewhere` });
        await client
          .db(followed)
          .collection('outbox')
          .insertOne({ ...event });
        expect(await readPast(cursor, event.eventId)).toEqual([event.eventId]);
      } finally {
        await cursor.close();
      }
    });
  }
});
