import type { Connection } from 'mongoose';
import type { OutboxDoc } from '../../lib/documents/outbox-event.document';
import { MongoOutboxRelayStore } from '../../lib/relay/mongo/mongo-outbox-relay.store';
import { mongoRelayStateReader } from '../../lib/relay/mongo/mongo-relay-state.reader';
import { ensureRelayIndexes } from '../../lib/relay/mongo/relay-indexes';
import { slotsOfPartition } from '../../lib/relay/ports/partition-layout';
import { contractEvent } from '../contracts/support/contract-events';
import { describeWith, suiteDatabase, uniqueName } from '../harness';

const SCHEDULED = 2_000;

/**
 * The relay's recurring reads (the sweep, the pending count, the lag) read only what can be
 * published now: with thousands of scheduled events waiting, each reads a handful of index keys
 * and documents, not the scheduled ones (`PUBLISHABLE_NOW` on `outbox_relay_status_due`).
 * Measured by the database profiler, which counts what each command examined: a real mongod's
 * query planner is the claim (PoppyDB neither plans by these bounds nor profiles).
 */
describeWith(['real-mongodb'], 'the recurring reads pass over scheduled events', () => {
  let conn: Connection;
  suiteDatabase('recurring-reads', (opened) => (conn = opened));

  // One partition, and a partition of three (its slot indexes exist, its reads filter by slot).
  it.each([1, 3])(
    'the sweep, the pending count and the lag examine only the events publishable now (%i partitions)',
    async (partitions) => {
      const db = conn.db!;
      const names = { outbox: uniqueName('outbox'), deadLetters: uniqueName('dead') };
      const outbox = db.collection<OutboxDoc>(names.outbox);
      const logger = { log: () => {}, debug: () => {}, warn: () => {}, error: () => {} };
      await ensureRelayIndexes(outbox, db.collection(names.deadLetters), 3600, logger, partitions);
      const range = partitions > 1 ? slotsOfPartition(0, 1) : undefined;

      const now = Date.now();
      const event = (aggregateId: string, occurredAgoMs: number, availableInMs?: number) =>
        contractEvent(aggregateId, {
          occurredAt: new Date(now - occurredAgoMs),
          ...(availableInMs !== undefined && { availableAt: new Date(now + availableInMs) }),
        }) as OutboxDoc;
      // Scheduled first: by `_id` they come before every event publishable now.
      await outbox.insertMany(
        Array.from({ length: SCHEDULED }, (_, i) => event(`s-${i}`, 600_000, 3_600_000)),
      );
      await outbox.insertMany([event('a', 600_000), event('b', 600_000), event('c', 0)]);

      await db.command({ profile: 2 });
      try {
        const store = new MongoOutboxRelayStore(db, names, range);
        const stale = await store.findStaleEvents(
          undefined,
          new Date(now - 60_000),
          new Date(),
          100,
        );
        expect(stale.map((found) => found.aggregateId).sort()).toEqual(['a', 'b']);
        expect(await store.pendingStats()).toMatchObject({ count: 3 });
        const oldest = await mongoRelayStateReader(db, {
          outbox: names.outbox,
          relayState: uniqueName('state'),
        }).oldestPendingAt();
        expect(oldest?.getTime()).toBe(now - 600_000);
      } finally {
        await db.command({ profile: 0 });
      }

      const profiled = await db
        .collection<{ keysExamined?: number; docsExamined?: number; command?: object }>(
          'system.profile',
        )
        .find({ ns: `${db.databaseName}.${names.outbox}` })
        .toArray();
      const reads = profiled.filter((entry) => entry.docsExamined !== undefined);
      // find (the sweep), aggregate (countDocuments), find (the oldest for pendingStats), find (lag)
      expect(reads.length).toBeGreaterThanOrEqual(4);
      // Before `outbox_relay_status_due` each examined the 2 000 scheduled events too.
      const over = reads.filter((read) => read.docsExamined! > 3 || read.keysExamined! > 5);
      expect(over).toEqual([]);
    },
  );
});
