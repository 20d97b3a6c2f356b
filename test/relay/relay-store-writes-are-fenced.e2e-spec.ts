import { Types } from 'mongoose';
import type { Connection } from 'mongoose';
import type { OutboxEventRecord } from '../../lib/documents/outbox-event.document';
import { OUTBOX_DEFAULT_COLLECTIONS } from '../../lib/common/outbox-storage.options';
import { MongoChangeSource } from '../../lib/relay/mongo/mongo-change.source';
import { MongoOutboxRelayStore } from '../../lib/relay/mongo/mongo-outbox-relay.store';
import { MongoRelayStateStore } from '../../lib/relay/mongo/mongo-relay-state.store';
import { ChangeSourceError } from '../../lib/relay/ports/change-source';
import { describeWith, suiteDatabase, uniqueName } from '../harness';

/** The MongoDB side of the relay's guarantees, against the server of this run. */
describeWith(['mongodb'], 'the relay’s MongoDB stores', () => {
  let conn: Connection;
  let store: MongoOutboxRelayStore;

  const event = (
    aggregateId: string,
    extra: Partial<OutboxEventRecord> = {},
  ): OutboxEventRecord => ({
    _id: new Types.ObjectId(),
    eventId: uniqueName('evt'),
    eventType: 'OrderPlaced',
    aggregateType: 'Order',
    aggregateId,
    payload: { n: 1 },
    occurredAt: new Date(),
    status: 'pending',
    attempts: 0,
    ...extra,
  });
  const insert = async (...events: OutboxEventRecord[]) => {
    await conn.collection('outbox').insertMany(events as never[]);
    return events;
  };
  const read = (e: OutboxEventRecord) => conn.collection('outbox').findOne({ _id: e._id });

  suiteDatabase('relay-store', (opened) => {
    conn = opened;
    store = new MongoOutboxRelayStore(conn.db!, OUTBOX_DEFAULT_COLLECTIONS);
  });

  it('reads from the primary at read concern majority and writes with w: majority, whatever the URI says', () => {
    // Defect: read and write concerns were inherited from the app's connection string.
    expect(store.outbox.readConcern?.level).toBe('majority');
    expect(store.outbox.writeConcern?.w).toBe('majority');
    expect(store.outbox.readPreference?.mode).toBe('primary');
  });

  it('a write of an older leader never lands on a document a newer leader wrote', async () => {
    // Defect: markPublished, recordFailure and deadLetter were not fenced.
    const [e] = await insert(event('fence'));
    await store.recordFailure(
      e,
      { attempts: 2, nextAttemptAt: new Date(), error: 'newer', at: new Date() },
      8,
    );
    await store.recordFailure(
      e,
      { attempts: 1, nextAttemptAt: new Date(), error: 'older', at: new Date() },
      7,
    );
    await store.markPublished([e._id], new Date(), 7);
    await store.markDead(e, { reason: 'rejected', error: 'older', attempts: 1, at: new Date() }, 7);
    expect(await read(e)).toMatchObject({
      status: 'pending',
      attempts: 2,
      lastError: 'newer',
      relayFence: 8,
    });
    await store.markPublished([e._id], new Date(), 9);
    expect(await read(e)).toMatchObject({ status: 'published', relayFence: 9 });
  });

  it('marks held-back events without overwriting a failure’s own retry time, and finds their aggregates', async () => {
    const retryAt = new Date(Date.now() + 60_000);
    const [failed, held] = await insert(
      event('held', { attempts: 1, nextAttemptAt: retryAt }),
      event('held'),
    );
    await store.markHeld([failed._id, held._id], new Date(0), 3);
    expect((await read(failed))?.nextAttemptAt).toEqual(retryAt);
    expect((await read(held))?.nextAttemptAt).toEqual(new Date(0));
    const retrying = await store.findRetryingAggregates(undefined, 10);
    expect(retrying).toContainEqual({
      aggregateType: 'Order',
      aggregateId: 'held',
      retryAt: new Date(0),
    });
  });

  it('moves a dead letter in three steps, each safe to repeat after a crash', async () => {
    const [e] = await insert(event('dead'));
    await store.markDead(
      e,
      { reason: 'rejected', error: 'MESSAGE_TOO_LARGE', attempts: 1, at: new Date() },
      null,
    );
    expect(await store.findPendingState([e._id])).toEqual([]);
    const [marked] = (await store.findMarkedDead(10)).filter((m) => m.eventId === e.eventId);
    await store.copyToDeadLetters(marked);
    await store.copyToDeadLetters(marked); // a crash before the removal repeats the copy
    await store.removeDead(e._id, null);
    expect(await read(e)).toBeNull();
    const letters = await conn
      .collection('outbox_dead_letters')
      .find({ eventId: e.eventId })
      .toArray();
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({
      reason: 'rejected',
      attempts: 1,
      lastError: 'MESSAGE_TOO_LARGE',
    });
  });

  it('a dropped outbox collection is a lost stream position', async () => {
    // Defect: the stream's end (invalidate) was never seen; the relay reopened silently.
    const name = uniqueName('dropped');
    const collection = conn.db!.collection(name);
    await collection.insertOne({ warm: true });
    const cursor = await new MongoChangeSource(collection as never, {
      batchSize: 10,
      idleMs: 200,
    }).open(undefined);
    await collection.drop();
    let failure: unknown;
    for (let i = 0; i < 50 && !failure; i++) {
      try {
        await cursor.next(10);
      } catch (error) {
        failure = error;
      }
    }
    await cursor.close();
    expect(failure).toBeInstanceOf(ChangeSourceError);
    expect((failure as ChangeSourceError).kind).toBe('position-lost');
  });
});

/**
 * Fencing of the lease and checkpoint documents: a conditional update, else an insert that the
 * unique `_id` refuses when the document exists (no conditional upsert, which PoppyDB would
 * apply even when its condition does not match), so this runs on any replica set.
 */
describeWith(['mongodb'], 'the relay’s lease and checkpoint documents are fenced', () => {
  let conn: Connection;
  let state: MongoRelayStateStore;

  suiteDatabase('relay-state', (opened) => {
    conn = opened;
    state = new MongoRelayStateStore(conn.db!, OUTBOX_DEFAULT_COLLECTIONS.relayState, 'default');
  });

  it('the checkpoint is claimed by a term: an older leader’s save no longer lands', async () => {
    expect(await state.claimCheckpoint(4)).toEqual({ token: undefined, savedAt: undefined });
    expect(await state.saveCheckpoint({ t: 1 }, 4, new Date())).toBe(true);
    expect(await state.claimCheckpoint(5)).toMatchObject({ token: { t: 1 } });
    expect(await state.saveCheckpoint({ t: 2 }, 4, new Date())).toBe(false);
    expect(await state.claimCheckpoint(4)).toBeUndefined();
  });

  it('takes the lease on the server’s time and fences it', async () => {
    const now = await state.serverTime();
    expect(Math.abs(now.getTime() - Date.now())).toBeLessThan(60_000);
    const grant = await state.acquireLease('a', now, new Date(now.getTime() + 10_000));
    expect(grant?.fencing).toBeGreaterThan(0);
    expect(await state.acquireLease('b', now, new Date(now.getTime() + 10_000))).toBeUndefined();
    expect(await state.renewLease('a', grant!.fencing, new Date(now.getTime() + 20_000))).toBe(
      true,
    );
  });
});
