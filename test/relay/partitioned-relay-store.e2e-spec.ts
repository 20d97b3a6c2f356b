import { Types } from 'mongoose';
import type { Connection } from 'mongoose';
import type { OutboxEventRecord } from '../../lib/documents/outbox-event.document';
import { eventSlot } from '../../lib/events/event-slot';
import { OUTBOX_DEFAULT_COLLECTIONS } from '../../lib/common/outbox-storage.options';
import { MongoRelayPartitions } from '../../lib/relay/mongo/mongo-relay-partitions';
import { MongoRelayStateStore } from '../../lib/relay/mongo/mongo-relay-state.store';
import { ensureRelayIndexes } from '../../lib/relay/mongo/relay-indexes';
import { slotsOfPartition } from '../../lib/relay/ports/partition-layout';
import type { RelayLayout } from '../../lib/relay/ports/relay-partitions.store';
import { describeWith, suiteDatabase, uniqueName } from '../harness';

const collections = OUTBOX_DEFAULT_COLLECTIONS;
const streamOptions = { batchSize: 100, idleMs: 200 };

/** `MongoRelayPartitions` against the server of this run: every method of the contract. */
describeWith(['mongodb'], 'the partitioned relay’s MongoDB stores', () => {
  let conn: Connection;

  const event = (aggregateId: string, extra: Partial<OutboxEventRecord> = {}) =>
    ({
      _id: new Types.ObjectId(),
      eventId: uniqueName('evt'),
      eventType: 'Happened',
      aggregateType: 'Order',
      aggregateId,
      payload: {},
      occurredAt: new Date(Date.now() - 60_000),
      status: 'pending',
      attempts: 0,
      slot: eventSlot('Order', aggregateId),
      ...extra,
    }) as OutboxEventRecord;
  const later = (now: Date, ms: number) => new Date(now.getTime() + ms);

  /** A fresh relay name per test: its documents do not meet another test's. */
  const partitions = (relayName = uniqueName('relay')) =>
    new MongoRelayPartitions(conn.db!, { collections, relayName, ...streamOptions });

  suiteDatabase('partitions', (opened) => (conn = opened));

  it('heartbeats: live members by the server’s time; a member that leaves is gone at once', async () => {
    const ports = partitions();
    const state = ports.scope({ partitions: 1, generation: 0 }, 0).state;
    const now = await state.serverTime();
    await ports.membership.heartbeat({
      owner: 'a',
      partitions: 6,
      holding: [0, 1],
      expiresAt: later(now, 10_000),
    });
    await ports.membership.heartbeat({
      owner: 'b',
      partitions: 6,
      holding: [],
      expiresAt: later(now, 1_000),
    });
    await ports.membership.heartbeat({
      owner: 'b',
      partitions: 6,
      holding: [2],
      expiresAt: later(now, 2_000),
    });
    // Another relay name's members are not ours.
    await partitions().membership.heartbeat({
      owner: 'z',
      partitions: 6,
      holding: [],
      expiresAt: later(now, 10_000),
    });
    expect(await ports.membership.liveMembers(now)).toEqual([
      { owner: 'a', partitions: 6, holding: [0, 1], expiresAt: later(now, 10_000) },
      { owner: 'b', partitions: 6, holding: [2], expiresAt: later(now, 2_000) },
    ]);
    expect((await ports.membership.liveMembers(later(now, 2_000))).map((m) => m.owner)).toEqual([
      'a',
    ]);
    await ports.membership.leave('a');
    expect((await ports.membership.liveMembers(now)).map((m) => m.owner)).toEqual(['b']);
  });

  it('the layout switches by compare-and-set on its generation', async () => {
    const { membership } = partitions();
    expect(await membership.layout()).toBeUndefined();
    const six = await membership.switchLayout(undefined, 6);
    expect(six).toEqual({ partitions: 6, generation: 1 });
    expect(await membership.switchLayout(undefined, 4)).toBeUndefined(); // another switched first
    expect(await membership.layout()).toEqual(six);
    const three = await membership.switchLayout(six, 3);
    expect(three).toEqual({ partitions: 3, generation: 2 });
    expect(await membership.switchLayout(six, 2)).toBeUndefined();
    expect(await membership.layout()).toEqual(three);
  });

  it('fencing numbers only go up: across partitions, a switch away from the single lease, and back', async () => {
    const relayName = uniqueName('relay');
    const ports = partitions(relayName);
    const single = new MongoRelayStateStore(conn.db!, collections.relayState, relayName);
    const fences: number[] = [];
    const take = async (store: MongoRelayStateStore, owner: string) => {
      const now = await store.serverTime();
      const grant = await store.acquireLease(owner, now, later(now, 60_000));
      expect(grant).toBeDefined();
      fences.push(grant!.fencing);
      await store.releaseLease(owner, grant!.fencing);
      return grant!;
    };
    // A deployment that ran the single relay for a while (three leaders).
    for (const owner of ['x', 'y', 'z']) await take(single, owner);
    expect(await ports.membership.leases(undefined)).toEqual([
      expect.objectContaining({ partition: 0, owner: 'z', fencing: fences[2] }),
    ]);

    const six = (await ports.membership.switchLayout(undefined, 6))!;
    for (let p = 0; p < 6; p++)
      await take(ports.scope(six, p).state as MongoRelayStateStore, `p${p}`);
    const leases = await ports.membership.leases(six);
    expect(leases.map((l) => l.partition)).toEqual([0, 1, 2, 3, 4, 5]);

    const one = (await ports.membership.switchLayout(six, 1))!;
    await take(ports.scope(one, 0).state as MongoRelayStateStore, 'single-again');
    const three = (await ports.membership.switchLayout(one, 3))!;
    await take(ports.scope(three, 2).state as MongoRelayStateStore, 'p2-of-3');
    await take(ports.scope(three, 0).state as MongoRelayStateStore, 'p0-of-3');

    for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1]);
  });

  it('a partition lease expires on the server’s time, not before; the ex-owner can no longer renew', async () => {
    const ports = partitions();
    const layout = (await ports.membership.switchLayout(undefined, 4))!;
    const state = ports.scope(layout, 1).state;
    const now = await state.serverTime();
    const a = await state.acquireLease('a', now, later(now, 1_500));
    expect(a).toBeDefined();
    expect(await state.acquireLease('b', now, later(now, 10_000))).toBeUndefined();
    // Another partition is another lease.
    expect(
      await ports.scope(layout, 2).state.acquireLease('b', now, later(now, 10_000)),
    ).toBeDefined();
    let serverNow = await state.serverTime();
    while (serverNow.getTime() < now.getTime() + 1_500) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      serverNow = await state.serverTime();
    }
    const b = await state.acquireLease('b', serverNow, later(serverNow, 10_000));
    expect(b!.fencing).toBeGreaterThan(a!.fencing);
    expect(await state.renewLease('a', a!.fencing, later(serverNow, 20_000))).toBe(false);
    expect(await state.renewLease('b', b!.fencing, later(serverNow, 20_000))).toBe(true);
    expect(await ports.membership.leases(layout)).toEqual([
      expect.objectContaining({ partition: 1, owner: 'b', fencing: b!.fencing }),
      expect.objectContaining({ partition: 2, owner: 'b' }),
    ]);
  });

  it('a lease of a layout that was switched away is not taken', async () => {
    const ports = partitions();
    const old = (await ports.membership.switchLayout(undefined, 4))!;
    const stale = ports.scope(old, 0).state;
    await ports.membership.switchLayout(old, 2);
    const now = await stale.serverTime();
    expect(await stale.acquireLease('slow', now, later(now, 10_000))).toBeUndefined();
  });

  it('each partition has its own checkpoint', async () => {
    const ports = partitions();
    const layout: RelayLayout = (await ports.membership.switchLayout(undefined, 2))!;
    const [p0, p1] = [ports.scope(layout, 0).state, ports.scope(layout, 1).state];
    const now = await p0.serverTime();
    const g0 = (await p0.acquireLease('a', now, later(now, 10_000)))!;
    const g1 = (await p1.acquireLease('a', now, later(now, 10_000)))!;
    expect(await p0.claimCheckpoint(g0.fencing)).toEqual({ token: undefined, savedAt: undefined });
    expect(await p0.saveCheckpoint({ at: 'p0' }, g0.fencing, now)).toBe(true);
    expect(await p1.claimCheckpoint(g1.fencing)).toEqual({ token: undefined, savedAt: undefined });
    expect(await p0.claimCheckpoint(g0.fencing)).toMatchObject({ token: { at: 'p0' } });
  });

  it('a partition’s checkpoint is fenced: after a newer term claimed it, an older term’s save does not land', async () => {
    const ports = partitions();
    const layout = (await ports.membership.switchLayout(undefined, 3))!;
    const state = ports.scope(layout, 1).state;
    const now = await state.serverTime();
    const old = (await state.acquireLease('old', now, later(now, 1)))!;
    await state.claimCheckpoint(old.fencing);
    expect(await state.saveCheckpoint({ by: 'old' }, old.fencing, now)).toBe(true);
    let serverNow = await state.serverTime();
    while (serverNow.getTime() <= now.getTime() + 1) serverNow = await state.serverTime();
    const fresh = (await state.acquireLease('new', serverNow, later(serverNow, 10_000)))!;
    expect(await state.claimCheckpoint(fresh.fencing)).toMatchObject({ token: { by: 'old' } });
    expect(await state.saveCheckpoint({ by: 'old, late' }, old.fencing, serverNow)).toBe(false);
    expect(await state.clearCheckpoint(old.fencing, serverNow)).toBe(false);
    expect(await state.claimCheckpoint(old.fencing)).toBeUndefined();
    expect(await state.claimCheckpoint(fresh.fencing)).toMatchObject({ token: { by: 'old' } });
  });

  it('scoped reads see only their partition’s slots, page by page, with the slot indexes', async () => {
    const outbox = conn.collection(uniqueName('outbox'));
    const names = { ...collections, outbox: outbox.collectionName };
    const ports = new MongoRelayPartitions(conn.db!, {
      collections: names,
      relayName: uniqueName('relay'),
      ...streamOptions,
    });
    await ensureRelayIndexes(
      outbox as never,
      conn.collection(collections.deadLetters) as never,
      3600,
      {
        error: (m: string) => {
          throw new Error(m);
        },
      } as never,
      6,
    );
    const indexNames = (await outbox.indexes()).map((i) => i.name);
    expect(indexNames).toEqual(
      expect.arrayContaining(['outbox_relay_slot_order', 'outbox_relay_slot_marked']),
    );
    const events: OutboxEventRecord[] = [];
    for (let i = 0; i < 60; i++) {
      events.push(
        event(`agg-${i}`),
        event(`agg-${i}`, { nextAttemptAt: i % 5 === 0 ? new Date(0) : undefined }),
      );
    }
    await outbox.insertMany(
      events.map((e) => (e.nextAttemptAt ? e : { ...e, nextAttemptAt: undefined })) as never[],
      { ignoreUndefined: true } as never,
    );
    const layout = { partitions: 6, generation: 1 };
    const seen = new Set<string>();
    for (let p = 0; p < 6; p++) {
      const { from, to } = slotsOfPartition(p, 6);
      const inRange = events.filter((e) => e.slot! >= from && e.slot! < to);
      const store = ports.scope(layout, p).outbox;
      const paged: OutboxEventRecord[] = [];
      let after: OutboxEventRecord | undefined;
      for (;;) {
        const page = await store.findPendingPage(after, 3);
        if (page.length === 0) break;
        paged.push(...page);
        after = page[page.length - 1];
      }
      expect(paged.map((e) => e.eventId).sort()).toEqual(inRange.map((e) => e.eventId).sort());
      for (const e of paged) seen.add(e.eventId);
      // Each aggregate's two events in order, aggregates one after the other.
      for (let i = 0; i < paged.length; i += 2) {
        expect(paged[i].aggregateId).toBe(paged[i + 1].aggregateId);
        expect(
          paged[i]._id < paged[i + 1]._id || String(paged[i]._id) < String(paged[i + 1]._id),
        ).toBe(true);
      }
      expect((await store.pendingStats()).count).toBe(inRange.length);
      const retrying: string[] = [];
      let afterRef: { aggregateType: string; aggregateId: string } | undefined;
      for (;;) {
        const page = await store.findRetryingAggregates(afterRef, 2);
        if (page.length === 0) break;
        retrying.push(...page.map((r) => r.aggregateId));
        afterRef = page[page.length - 1];
      }
      expect(retrying.sort()).toEqual(
        [...new Set(inRange.filter((e) => e.nextAttemptAt).map((e) => e.aggregateId))].sort(),
      );
      const stale = await store.findStaleEvents(undefined, new Date(), new Date(), 1000);
      expect(stale.map((e) => String(e._id)).sort()).toEqual(
        inRange.map((e) => String(e._id)).sort(),
      );
    }
    expect(seen.size).toBe(events.length);
  });

  it('a partition’s change stream delivers only its slot range (filtered on the server)', async () => {
    const outbox = conn.collection(uniqueName('outbox'));
    await outbox.insertOne({ warm: true });
    const ports = new MongoRelayPartitions(conn.db!, {
      collections: { ...collections, outbox: outbox.collectionName },
      relayName: uniqueName('relay'),
      ...streamOptions,
    });
    const layout = { partitions: 3, generation: 1 };
    const { from, to } = slotsOfPartition(1, 3);
    const cursor = await ports.scope(layout, 1).changes.open(undefined);
    const events = Array.from({ length: 30 }, (_, i) => event(`s-${i}`));
    await outbox.insertMany(events as never[]);
    const expected = events.filter((e) => e.slot! >= from && e.slot! < to).map((e) => e.eventId);
    expect(expected.length).toBeGreaterThan(0);
    const received: OutboxEventRecord[] = [];
    for (let i = 0; i < 50 && received.length < expected.length; i++) {
      received.push(...(await cursor.next(100)).changes.map((c) => c.event));
    }
    // Whatever else arrives within another idle wait would be outside the range.
    received.push(...(await cursor.next(100)).changes.map((c) => c.event));
    await cursor.close();
    expect(received.map((e) => e.eventId)).toEqual(expected);
  });

  it('stamps the slot on pending events written before slots, and only on those', async () => {
    const outbox = conn.collection(uniqueName('outbox'));
    const ports = new MongoRelayPartitions(conn.db!, {
      collections: { ...collections, outbox: outbox.collectionName },
      relayName: uniqueName('relay'),
      ...streamOptions,
    });
    const bare = (id: string, status = 'pending') => {
      const { slot: _slot, ...rest } = event(id, { status: status as never });
      return rest;
    };
    await outbox.insertMany([
      bare('a'),
      bare('b'),
      bare('c'),
      bare('published', 'published'),
      event('stamped', { slot: 7 }),
    ] as never[]);
    expect(await ports.stampMissingSlots(2)).toBe(2);
    expect(await ports.stampMissingSlots(10)).toBe(1);
    expect(await ports.stampMissingSlots(10)).toBe(0);
    const docs = await outbox.find({}).toArray();
    const slots = Object.fromEntries(docs.map((d) => [d.aggregateId, d.slot]));
    expect(slots).toEqual({
      a: eventSlot('Order', 'a'),
      b: eventSlot('Order', 'b'),
      c: eventSlot('Order', 'c'),
      published: undefined,
      stamped: 7,
    });
  });
});

/**
 * The switch closes the single lease to relays of older versions: their conditional upsert of
 * `lease:<name>` must be refused (duplicate key); PoppyDB applies such an upsert anyway.
 */
describeWith(
  ['real-mongodb'],
  'a partitioned layout shuts out relays that know only the single lease',
  () => {
    let conn: Connection;

    suiteDatabase('partitions', (opened) => (conn = opened));

    it('the single lease can be neither taken nor renewed after a switch to several partitions', async () => {
      const relayName = uniqueName('relay');
      const ports = new MongoRelayPartitions(conn.db!, {
        collections,
        relayName,
        ...streamOptions,
      });
      const single = new MongoRelayStateStore(conn.db!, collections.relayState, relayName);
      let now = await single.serverTime();
      const grant = (await single.acquireLease('old', now, new Date(now.getTime() + 60_000)))!;
      await single.releaseLease('old', grant.fencing);
      const six = (await ports.membership.switchLayout(undefined, 6))!;
      now = await single.serverTime();
      expect(
        await single.acquireLease('old', now, new Date(now.getTime() + 60_000)),
      ).toBeUndefined();
      expect(await single.renewLease('old', grant.fencing, new Date(now.getTime() + 60_000))).toBe(
        false,
      );
      // Reopened by a switch back to one partition, above every fencing number given.
      const p0 = (await ports
        .scope(six, 0)
        .state.acquireLease('p0', now, new Date(now.getTime() + 1)))!;
      await ports.membership.switchLayout(six, 1);
      now = await single.serverTime();
      const again = await single.acquireLease('new', now, new Date(now.getTime() + 60_000));
      expect(again!.fencing).toBeGreaterThan(p0.fencing);
    });
  },
);
