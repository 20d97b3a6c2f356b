import { mongo } from 'mongoose';
import type { Connection } from 'mongoose';
import { OUTBOX_DEFAULT_COLLECTIONS } from '../../lib/common/outbox-storage.options';
import { MongoRelayMembershipStore } from '../../lib/relay/mongo/mongo-relay-membership.store';
import { MongoRelayPartitions } from '../../lib/relay/mongo/mongo-relay-partitions';
import { MongoRelayStateStore } from '../../lib/relay/mongo/mongo-relay-state.store';
import { relayCollection } from '../../lib/relay/mongo/relay-collections';
import { RelayFencingGate } from '../../lib/relay/mongo/relay-fencing.gate';
import { CLOSED_BY_SWITCH, partitionedRelayIds } from '../../lib/documents/relay-state.document';
import type { RelayLayout } from '../../lib/relay/ports/relay-partitions.store';
import type { RelayStateStore } from '../../lib/relay/ports/relay-state.store';
import { describeWith, suiteDatabase, uniqueName } from '../harness';

const collections = OUTBOX_DEFAULT_COLLECTIONS;
const streamOptions = { batchSize: 100, idleMs: 200 };
const later = (date: Date, ms: number) => new Date(date.getTime() + ms);

type Hook = (op: string, filter: Record<string, unknown>, update: unknown) => Promise<void>;

/**
 * `db`, but every write on a collection it hands out calls `hook` first (to act between two
 * steps of the switch, or to fail from some step on, as a process that dies there).
 */
function hookedDb(db: mongo.Db, hook: Hook): mongo.Db {
  const writes = new Set(['updateOne', 'findOneAndUpdate', 'insertOne']);
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'collection') {
        return (name: string, options?: mongo.CollectionOptions) => {
          const collection = target.collection(name, options);
          return new Proxy(collection, {
            get(c, p) {
              const value = Reflect.get(c, p, c) as unknown;
              if (typeof value !== 'function') return value;
              if (!writes.has(String(p))) return (value as (...a: unknown[]) => unknown).bind(c);
              return async (...args: unknown[]) => {
                await hook(String(p), (args[0] ?? {}) as Record<string, unknown>, args[1]);
                return (value as (...a: unknown[]) => unknown).apply(c, args);
              };
            },
          });
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
}

/** The switch's last step: the layout compare-and-set under its claim. */
const isCommit = (op: string, filter: Record<string, unknown>, update: unknown) =>
  op === 'updateOne' &&
  'switching.token' in filter &&
  (update as { $set?: { generation?: number } } | undefined)?.$set?.generation !== undefined;

/**
 * `MongoRelayMembershipStore.switchLayout` closes the old layout's leases itself (each only if
 * expired at the server's time) before its compare-and-set, so a relay of the old layout that
 * takes or renews a lease after the caller's check can no longer publish next to the new layout
 * (simulation finding `single-lease-taken-between-layout-check-and-switch`).
 */
describeWith(['mongodb'], 'a layout switch closes the old layout’s leases itself', () => {
  let conn: Connection;

  suiteDatabase('switch', (opened) => (conn = opened));

  /** Another instance's membership store (`staleMs`: when a switch claim counts as abandoned). */
  const membershipOn = (db: mongo.Db, relayName: string, staleMs?: number) => {
    const ids = partitionedRelayIds(relayName);
    const gate = new RelayFencingGate(relayCollection(db, collections.relayState), ids);
    return new MongoRelayMembershipStore(db, collections.relayState, relayName, ids, gate, staleMs);
  };

  /** The relays' ports, and a membership store (the switcher's) whose writes pass `hook`. */
  const setup = (hook: Hook = async () => undefined, staleMs?: number) => {
    const relayName = uniqueName('relay');
    const ports = new MongoRelayPartitions(conn.db!, { collections, relayName, ...streamOptions });
    const ids = partitionedRelayIds(relayName);
    const switcher = membershipOn(hookedDb(conn.db!, hook), relayName, staleMs);
    const single = new MongoRelayStateStore(conn.db!, collections.relayState, relayName);
    const state = conn.db!.collection<{ _id: string }>(collections.relayState);
    const leaseDoc = (id: string) => state.findOne({ _id: id });
    return { relayName, ports, switcher, single, ids, leaseDoc };
  };

  const take = async (store: RelayStateStore, owner: string, ms = 60_000) => {
    const now = await store.serverTime();
    return store.acquireLease(owner, now, later(now, ms));
  };
  /** Until the server's time is past `date`. */
  const waitPast = async (store: RelayStateStore, date: Date) => {
    while ((await store.serverTime()).getTime() <= date.getTime()) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('a valid single lease (taken after the caller’s check): no switch, layout and lease unchanged', async () => {
    const { ports, switcher, single, ids, leaseDoc } = setup();
    const first = (await take(single, 'old'))!;
    await single.releaseLease('old', first.fencing);
    // The caller's check: no valid lease of the stored layout (none stored: the single lease).
    const now = await single.serverTime();
    const leases = await switcher.leases(undefined);
    expect(leases.filter((l) => l.expiresAt > now)).toEqual([]);
    // A relay of the old layout takes the single lease between that check and the switch.
    const grant = (await take(single, 'old'))!;
    const before = await leaseDoc(ids.single.lease);

    expect(await switcher.switchLayout(undefined, 4)).toBeUndefined();
    expect(await switcher.layout()).toBeUndefined();
    expect(await ports.membership.layout()).toBeUndefined();
    expect(await leaseDoc(ids.single.lease)).toEqual(before);
    expect(await single.renewLease('old', grant.fencing, later(now, 120_000))).toBe(true);
  });

  it('a valid partition lease: no switch, layout unchanged, the leases it closed before are free again', async () => {
    const { ports, switcher, ids, leaseDoc } = setup();
    const two = (await switcher.switchLayout(undefined, 2))!;
    const p0 = ports.scope(two, 0).state;
    const p1 = ports.scope(two, 1).state;
    const g0 = (await take(p0, 'a', 1))!;
    await waitPast(p0, g0.expiresAt); // p0 expired: closed first, then reopened
    const g1 = (await take(p1, 'b'))!; // p1 valid
    const before = await leaseDoc(ids.partition(two.generation, 1).lease);

    expect(await switcher.switchLayout(two, 3)).toBeUndefined();
    expect(await switcher.layout()).toEqual(two);
    expect(await leaseDoc(ids.partition(two.generation, 1).lease)).toEqual(before);
    const now = await p1.serverTime();
    expect(await p1.renewLease('b', g1.fencing, later(now, 60_000))).toBe(true);
    const again = await take(p0, 'c');
    expect(again).toBeDefined();
    expect(again!.fencing).toBeGreaterThan(g1.fencing);
  });

  it('expired leases are closed and the switch happens: their relays can neither renew nor take them', async () => {
    const { ports, switcher, single } = setup();
    const two = (await switcher.switchLayout(undefined, 2))!;
    const grants = [
      (await take(ports.scope(two, 0).state, 'a', 1))!,
      (await take(ports.scope(two, 1).state, 'b', 1))!,
    ];
    await waitPast(single, later(grants[1].expiresAt, 1));

    const three = await switcher.switchLayout(two, 3);
    expect(three).toEqual({ partitions: 3, generation: two.generation + 1 });
    expect(await ports.membership.layout()).toEqual(three);
    const now = await single.serverTime();
    for (const [p, grant] of grants.entries()) {
      const state = ports.scope(two, p).state;
      expect(await state.renewLease(grant.owner, grant.fencing, later(now, 60_000))).toBe(false);
      expect(await take(state, grant.owner)).toBeUndefined();
      expect(await take(state, 'someone-else')).toBeUndefined();
    }
    const closed = await switcher.leases(two);
    expect(closed.map((l) => [l.partition, l.owner])).toEqual([
      [0, CLOSED_BY_SWITCH],
      [1, CLOSED_BY_SWITCH],
    ]);
    for (const lease of closed) expect(lease.expiresAt.getTime()).toBeGreaterThan(now.getTime());
    // The repair that runs with every read of the layout leaves a finished switch's closings.
    await switcher.layout();
    expect(await take(ports.scope(two, 0).state, 'late')).toBeUndefined();
  });

  it('a lease taken after the switch began is refused (the single lease, and a partition lease)', async () => {
    let during: (() => Promise<void>) | undefined;
    const { ports, switcher, single } = setup(async (op, filter, update) => {
      if (during && isCommit(op, filter, update)) {
        const act = during;
        during = undefined;
        await act();
      }
    });
    // From no stored layout (the single lease) to 2 partitions.
    const first = (await take(single, 'old', 1))!;
    await waitPast(single, first.expiresAt);
    const seen: unknown[] = [];
    during = async () => {
      seen.push(await take(single, 'old'));
      seen.push(await take(single, 'other'));
      const now = await single.serverTime();
      seen.push(await single.renewLease('old', first.fencing, later(now, 60_000)));
    };
    const two = (await switcher.switchLayout(undefined, 2))!;
    expect(two).toEqual({ partitions: 2, generation: 1 });
    expect(seen).toEqual([undefined, undefined, false]);

    // From 2 partitions to 3: p1 is taken, and let expire, after p0 was closed.
    const p0 = ports.scope(two, 0).state;
    const p1 = ports.scope(two, 1).state;
    seen.length = 0;
    during = async () => {
      seen.push(await take(p0, 'a'));
      seen.push(await take(p1, 'b'));
    };
    const three = await switcher.switchLayout(two, 3);
    expect(three).toEqual({ partitions: 3, generation: 2 });
    expect(seen).toEqual([undefined, undefined]);
  });

  /**
   * Every interleaving at the switch's write steps: an old relay whose lease expired acts just
   * before the switch's k-th write (takes the lease, or renews its own: the renewal only needs
   * its owner and fencing number). The switch and the old relay never both succeed.
   */
  it.each([
    ['the single lease (no stored layout)', 'take'],
    ['the single lease (no stored layout)', 'renew'],
    ['partition 1 of 2', 'take'],
    ['partition 1 of 2', 'renew'],
  ])(
    'an old relay acting at any step of the switch (%s, %s): never both it and the new layout',
    async (which, action) => {
      const outcomes: string[] = [];
      for (let k = 1; ; k++) {
        let writes = 0;
        let act: (() => Promise<boolean>) | undefined;
        let acted: boolean | undefined;
        const { ports, switcher, single } = setup(async () => {
          writes += 1;
          if (act && writes === k) {
            const run = act;
            act = undefined;
            acted = await run();
          }
        });
        let from: RelayLayout | undefined;
        let state: RelayStateStore = single;
        if (which !== 'the single lease (no stored layout)') {
          from = (await switcher.switchLayout(undefined, 2))!;
          state = ports.scope(from, 1).state;
        }
        const grant = (await take(state, 'old', 1))!;
        await waitPast(state, grant.expiresAt);
        writes = 0;
        act = async () => {
          const now = await state.serverTime();
          if (action === 'take') return (await take(state, 'old')) !== undefined;
          return state.renewLease('old', grant.fencing, later(now, 60_000));
        };
        const switched = await switcher.switchLayout(from, 3);
        if (acted === undefined) break; // the switch made fewer than k writes: all were tried
        expect([acted, switched !== undefined]).not.toEqual([true, true]);
        outcomes.push(`${k}:${acted ? 'old relay' : switched ? 'switch' : 'neither'}`);
      }
      // Early steps (before the lease is closed) let the old relay win; later ones the switch.
      expect(outcomes[0]).toBe('1:old relay');
      expect(outcomes[outcomes.length - 1]).toMatch(/:switch$/);
    },
  );

  it('a switcher that dies half-way leaves nothing closed for longer than its claim stays fresh', async () => {
    let dead = false;
    const staleMs = 1_000;
    const { ports, switcher, ids, leaseDoc, relayName } = setup(async (op, filter, update) => {
      if (isCommit(op, filter, update)) dead = true;
      if (dead) throw new Error('the switcher died');
    }, staleMs);
    // The single lease, expired: the dying switcher closes it, then dies before its commit.
    const single = new MongoRelayStateStore(conn.db!, collections.relayState, relayName);
    const first = (await take(single, 'old', 1))!;
    await waitPast(single, first.expiresAt);
    await expect(switcher.switchLayout(undefined, 4)).rejects.toThrow('the switcher died');
    expect(await leaseDoc(ids.single.lease)).toMatchObject({ owner: CLOSED_BY_SWITCH });
    // While its claim is fresh, the lease stays closed and no one else switches.
    expect(await take(single, 'old')).toBeUndefined();
    expect(await ports.membership.switchLayout(undefined, 2)).toBeUndefined();
    // Once it is stale, reading the layout repairs: the lease is free for the old layout again.
    const since = await single.serverTime();
    await waitPast(single, later(since, staleMs));
    expect(await membershipOn(conn.db!, relayName, staleMs).layout()).toBeUndefined();
    expect(await take(single, 'old')).toBeDefined();
  });

  it('a stale claim is taken over by the next switcher', async () => {
    let dead = false;
    const staleMs = 1_000;
    const { ports, switcher, relayName } = setup(async (op, filter, update) => {
      if (isCommit(op, filter, update)) dead = true;
      if (dead) throw new Error('the switcher died');
    }, staleMs);
    const single = new MongoRelayStateStore(conn.db!, collections.relayState, relayName);
    await expect(switcher.switchLayout(undefined, 4)).rejects.toThrow('the switcher died');
    const since = await single.serverTime();
    await waitPast(single, later(since, staleMs));
    const other = membershipOn(conn.db!, relayName, staleMs);
    const two: RelayLayout | undefined = await other.switchLayout(undefined, 2);
    expect(two).toEqual({ partitions: 2, generation: 1 });
    expect(await ports.membership.layout()).toEqual(two);
    expect(await take(single, 'old')).toBeUndefined();
  });
});

/**
 * Relays of versions before layouts take the single lease with a conditional upsert; the
 * switch must refuse it (duplicate `_id`) once it closed the lease. PoppyDB applies a
 * conditional upsert whose filter does not match, so only real MongoDB shows this.
 */
describeWith(
  ['real-mongodb'],
  'a layout switch shuts out an old-version relay that upserts the single lease mid-switch',
  () => {
    let conn: Connection;

    suiteDatabase('switch', (opened) => (conn = opened));

    it('the old version’s upsert of the closed single lease fails, and the switch happens', async () => {
      const relayName = uniqueName('relay');
      const ids = partitionedRelayIds(relayName);
      const leases = conn.db!.collection<{ _id: string }>(collections.relayState);
      const single = new MongoRelayStateStore(conn.db!, collections.relayState, relayName);
      const upsertLease = async (owner: string) => {
        const now = await single.serverTime();
        return leases.updateOne(
          { _id: ids.single.lease, $or: [{ owner }, { expiresAt: { $lte: now } }] },
          { $set: { owner, expiresAt: later(now, 60_000) }, $inc: { fencing: 1 } },
          { upsert: true },
        );
      };
      let outcome: unknown;
      let armed = true;
      const db = hookedDb(conn.db!, async (op, filter, update) => {
        if (armed && isCommit(op, filter, update)) {
          armed = false;
          outcome = await upsertLease('old-version').catch((error: { code?: number }) => ({
            code: error.code,
          }));
        }
      });
      const membership = new MongoRelayMembershipStore(
        db,
        collections.relayState,
        relayName,
        ids,
        new RelayFencingGate(relayCollection(db, collections.relayState), ids),
      );
      expect(await membership.switchLayout(undefined, 3)).toEqual({ partitions: 3, generation: 1 });
      expect(outcome).toEqual({ code: 11000 });
      expect(await leases.findOne({ _id: ids.single.lease })).not.toMatchObject({
        owner: 'old-version',
      });
    });
  },
);
