import type { OutboxEventRecord, OutboxDoc } from '../../lib/documents/outbox-event.document';
import { eventSlot } from '../../lib/events/event-slot';
import { partitionOfSlot } from '../../lib/relay/ports/partition-layout';
import type {
  RelayLayout,
  RelayPartitionPorts,
} from '../../lib/relay/ports/relay-partitions.store';
import type { RelayStateStore } from '../../lib/relay/ports/relay-state.store';
import { at, contractEvent, ids } from './support/contract-events';
import { contractCases } from './support/contract-cases';
import type { ContractSkips } from './support/contract-cases';

/** One implementation of `RelayPartitionPorts` for one relay name, nothing stored yet. */
export interface PartitionsFixture {
  /** One relay process's ports; every call reaches the same shared state. */
  ports(): RelayPartitionPorts;
  /** The single relay lease and checkpoint, as a relay that knows no layouts (older versions) uses them. */
  single(): RelayStateStore;
  /** Inserts committed events into the outbox. */
  insert(events: readonly OutboxEventRecord[]): Promise<void>;
  /** The stored document of `event`. */
  stored(event: OutboxEventRecord): Promise<OutboxDoc | undefined>;
}

export const PARTITIONS_CASES = {
  membership:
    'heartbeat records a member until expiresAt; liveMembers lists those alive at serverNow by owner; leave removes one',
  noLayout:
    'layout() is undefined before any switch; leases(undefined) is empty, then the single relay lease as partition 0',
  oneIsSingle:
    'the scope of a one-partition layout is the single relay lease and checkpoint, unfiltered',
  switchCas:
    'switchLayout switches only from the stored layout (by generation): generation + 1; a stale expected changes nothing',
  switchRefused:
    'switchLayout is refused while a lease of the expected layout is valid at the server’s time, and goes ahead once it is released',
  oldClosed: 'after a switch, a lease of the old layout can be neither taken nor renewed',
  singleClosed:
    'under several partitions the single relay lease cannot be taken; a switch back to one partition reopens it',
  fencingRises:
    'every lease grant’s fencing, in any partition or layout, is above every earlier one',
  scopeReads: 'a partition’s scope reads only events whose slot lies in its range',
  stamp:
    'stampMissingSlots stamps eventSlot on pending and dead-marked events without a slot, at most limit, and counts them',
} as const;

export type PartitionsCase = keyof typeof PARTITIONS_CASES;

const later = (date: Date, ms: number): Date => new Date(date.getTime() + ms);
const NO_LAYOUT: RelayLayout = { partitions: 1, generation: 0 };

/** The contract of `RelayPartitionPorts` (lib/relay/ports/relay-partitions.store.ts). */
export function relayPartitionsContract(
  fixture: () => Promise<PartitionsFixture>,
  skips: ContractSkips<PartitionsCase> = {},
): void {
  const test = contractCases(PARTITIONS_CASES, skips);
  let f: PartitionsFixture;
  let ports: RelayPartitionPorts;
  let now: Date;
  const lease = (layout: RelayLayout, partition: number) => ports.scope(layout, partition).state;
  beforeEach(async () => {
    f = await fixture();
    ports = f.ports();
    now = await f.single().serverTime();
  });

  test('membership', async () => {
    const { membership } = ports;
    await membership.heartbeat({
      owner: 'b',
      partitions: 3,
      holding: [1],
      expiresAt: later(now, 10_000),
    });
    await membership.heartbeat({
      owner: 'a',
      partitions: 3,
      holding: [],
      expiresAt: later(now, 5_000),
    });
    await membership.heartbeat({
      owner: 'a',
      partitions: 3,
      holding: [0, 2],
      expiresAt: later(now, 20_000),
    });
    expect(await f.ports().membership.liveMembers(now)).toEqual([
      { owner: 'a', partitions: 3, holding: [0, 2], expiresAt: later(now, 20_000) },
      { owner: 'b', partitions: 3, holding: [1], expiresAt: later(now, 10_000) },
    ]);
    expect((await membership.liveMembers(later(now, 10_000))).map((m) => m.owner)).toEqual(['a']);
    await membership.leave('a');
    expect((await membership.liveMembers(now)).map((m) => m.owner)).toEqual(['b']);
  });

  test('noLayout', async () => {
    expect(await ports.membership.layout()).toBeUndefined();
    expect(await ports.membership.leases(undefined)).toEqual([]);
    await f.single().acquireLease('a', now, later(now, 10_000));
    expect(await ports.membership.leases(undefined)).toEqual([
      { partition: 0, owner: 'a', fencing: 1, expiresAt: later(now, 10_000) },
    ]);
  });

  test('oneIsSingle', async () => {
    const grant = await lease(NO_LAYOUT, 0).acquireLease('a', now, later(now, 10_000));
    expect(grant).toMatchObject({ owner: 'a' });
    expect(await f.single().acquireLease('b', now, later(now, 10_000))).toBeUndefined();
    expect(await ports.membership.leases(undefined)).toEqual([
      { partition: 0, owner: 'a', fencing: grant?.fencing, expiresAt: later(now, 10_000) },
    ]);
    await f.single().claimCheckpoint(9);
    expect(await lease(NO_LAYOUT, 0).claimCheckpoint(8)).toBeUndefined();
    const noSlot = contractEvent('one');
    delete noSlot.slot;
    await f.insert([noSlot]);
    expect(ids(await ports.scope(NO_LAYOUT, 0).outbox.findPendingPage(undefined, 10))).toEqual(
      ids([noSlot]),
    );
  });

  test('switchCas', async () => {
    const first = await ports.membership.switchLayout(undefined, 3);
    expect(first).toEqual({ partitions: 3, generation: 1 });
    expect(await f.ports().membership.switchLayout(undefined, 2)).toBeUndefined();
    expect(await ports.membership.layout()).toEqual(first);
    const second = await f.ports().membership.switchLayout(first, 2);
    expect(second).toEqual({ partitions: 2, generation: 2 });
    expect(await ports.membership.switchLayout(first, 4)).toBeUndefined();
    expect(await ports.membership.layout()).toEqual(second);
  });

  test('switchRefused', async () => {
    const single = await f.single().acquireLease('a', now, later(now, 60_000));
    expect(await ports.membership.switchLayout(undefined, 3)).toBeUndefined();
    expect(await ports.membership.layout()).toBeUndefined();
    expect(await f.single().renewLease('a', single!.fencing, later(now, 60_000))).toBe(true);
    await f.single().releaseLease('a', single!.fencing);
    const three = await ports.membership.switchLayout(undefined, 3);
    expect(three).toEqual({ partitions: 3, generation: 1 });
    const held = await lease(three!, 1).acquireLease('b', now, later(now, 60_000));
    expect(held).toMatchObject({ owner: 'b' });
    expect(await ports.membership.switchLayout(three, 2)).toBeUndefined();
    expect(await lease(three!, 1).renewLease('b', held!.fencing, later(now, 90_000))).toBe(true);
    await lease(three!, 1).releaseLease('b', held!.fencing);
    expect(await ports.membership.switchLayout(three, 2)).toEqual({ partitions: 2, generation: 2 });
  });

  test('oldClosed', async () => {
    const three = (await ports.membership.switchLayout(undefined, 3))!;
    const grant = (await lease(three, 0).acquireLease('a', now, later(now, 60_000)))!;
    await lease(three, 0).releaseLease('a', grant.fencing);
    expect(await ports.membership.switchLayout(three, 2)).toEqual({ partitions: 2, generation: 2 });
    expect(await lease(three, 0).renewLease('a', grant.fencing, later(now, 90_000))).toBe(false);
    expect(await lease(three, 0).acquireLease('a', now, later(now, 90_000))).toBeUndefined();
    expect(await lease(three, 2).acquireLease('b', now, later(now, 90_000))).toBeUndefined();
  });

  test('singleClosed', async () => {
    const three = (await ports.membership.switchLayout(undefined, 3))!;
    expect(await f.single().acquireLease('old', now, later(now, 60_000))).toBeUndefined();
    const grant = (await lease(three, 1).acquireLease('a', now, later(now, 60_000)))!;
    await lease(three, 1).releaseLease('a', grant.fencing);
    const one = (await ports.membership.switchLayout(three, 1))!;
    expect(one).toEqual({ partitions: 1, generation: 2 });
    expect(await ports.membership.layout()).toEqual(one);
    const reopened = await lease(one, 0).acquireLease('a', now, later(now, 60_000));
    expect(reopened?.fencing).toBeGreaterThan(grant.fencing);
    expect(await f.single().acquireLease('old', now, later(now, 60_000))).toBeUndefined();
  });

  test('fencingRises', async () => {
    const grants: number[] = [];
    const take = async (state: RelayStateStore, owner: string) => {
      const grant = await state.acquireLease(owner, now, later(now, 60_000));
      expect(grant).toMatchObject({ owner });
      grants.push(grant!.fencing);
      await state.releaseLease(owner, grant!.fencing);
    };
    await take(f.single(), 'a');
    await take(f.single(), 'a');
    const three = (await ports.membership.switchLayout(undefined, 3))!;
    await take(lease(three, 2), 'a');
    await take(lease(three, 0), 'b');
    await take(lease(three, 2), 'b');
    const two = (await ports.membership.switchLayout(three, 2))!;
    await take(lease(two, 1), 'a');
    const one = (await ports.membership.switchLayout(two, 1))!;
    await take(lease(one, 0), 'c');
    for (let i = 1; i < grants.length; i++) expect(grants[i]).toBeGreaterThan(grants[i - 1]);
  });

  test('scopeReads', async () => {
    const layout: RelayLayout = { partitions: 2, generation: 1 };
    const byPartition = new Map<number, OutboxEventRecord[]>([
      [0, []],
      [1, []],
    ]);
    for (let n = 0; byPartition.get(0)!.length < 2 || byPartition.get(1)!.length < 2; n++) {
      const event = contractEvent(`s${n}`);
      byPartition.get(partitionOfSlot(event.slot as number, 2))!.push(event);
    }
    const events = [...byPartition.get(0)!, ...byPartition.get(1)!];
    await f.insert(events);
    for (const partition of [0, 1]) {
      const page = await ports.scope(layout, partition).outbox.findPendingPage(undefined, 10);
      expect(ids(page).sort()).toEqual(ids(byPartition.get(partition)!).sort());
    }
  });

  test('stamp', async () => {
    const unstamped = ['u1', 'u2', 'u3'].map((id) => {
      const event = contractEvent(id);
      delete event.slot;
      return event;
    });
    const published = contractEvent('u4');
    delete published.slot;
    const stamped = contractEvent('u5');
    await f.insert([...unstamped, published, stamped]);
    const store = ports.scope(NO_LAYOUT, 0).outbox;
    await store.markPublished([published._id], at(1), 1);
    await store.markDead(
      unstamped[2],
      { reason: 'rejected', error: 'x', attempts: 1, at: at(1) },
      1,
    );
    expect(await ports.stampMissingSlots(2)).toBe(2);
    expect(await ports.stampMissingSlots(10)).toBe(1);
    expect(await ports.stampMissingSlots(10)).toBe(0);
    for (const event of unstamped) {
      expect((await f.stored(event))?.slot).toBe(eventSlot(event.aggregateType, event.aggregateId));
    }
    expect((await f.stored(published))?.slot).toBeUndefined();
    expect((await f.stored(stamped))?.slot).toBe(stamped.slot);
  });
}
