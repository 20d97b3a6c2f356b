import type { OutboxEventRecord } from '../../lib/documents/outbox-event.document';
import type { ChangeCursor } from '../../lib/relay/ports/change-source';
import { resolveRelayOptions } from '../../lib/relay/relay.options';
import type { ResolvedRelayOptions } from '../../lib/relay/relay.options';
import { eventSlot } from '../../lib/events/event-slot';
import { partitionOfSlot } from '../../lib/relay/ports/partition-layout';
import type { TenantPorts } from '../../lib/relay/tenants/tenant.ports';
import { contractCases } from './support/contract-cases';
import type { ContractSkips } from './support/contract-cases';
import { contractEvent } from './support/contract-events';

/** One implementation of `TenantPorts` with the cluster-wide stream, on databases of its own. */
export interface TenantPortsFixture {
  /** The ports over the tenant databases `databases` lists at each call. */
  ports(databases: () => readonly string[]): TenantPorts;
  /** `count` tenant database names no other fixture uses (nothing written in them yet). */
  names(count: number): string[];
  /** Commits `events` into `database`'s outbox (one insert each, in this order). */
  insert(database: string, events: readonly OutboxEventRecord[]): Promise<void>;
  /** Drops `database` (`dropDatabase`). */
  drop(database: string): Promise<void>;
  /** Lets the ports work (their stream reads) until `done()`, at most `ms`. */
  waitFor(done: () => boolean, ms: number): Promise<void>;
  /** Drops the fixture's databases. */
  close(): Promise<void>;
}

/** The relay options both sides run with: the stream's batch and idle wait (the broker is unused). */
export function tenantContractRelay(idleMs: number): ResolvedRelayOptions {
  return resolveRelayOptions({ kafka: { brokers: ['contract:9092'] }, batchSize: 10, idleMs });
}

export const TENANT_PORTS_CASES = {
  listed:
    'databases() answers what the option lists at that call: a tenant added between two reads is in the second',
  isolated:
    'each database’s outbox reads its own events only (one aggregate id in two databases is two aggregates)',
  pending:
    'hasPending is false for a database never written and for one with nothing pending, true once one event is pending',
  stream:
    'a database’s subscription delivers its own inserts in commit order, never another database’s',
  wakes:
    'a watched database without a subscription: its first insert calls wake with its name, and the stream covers it',
  dropped:
    'a dropped tenant database does not end the others’ subscriptions: their later inserts are still delivered',
  partition:
    'narrowed to a partition (forPartition), a database’s outbox, stream and hasPending see that partition’s slots only; an event without a slot is pending in every partition',
} as const;

export type TenantPortsCase = keyof typeof TENANT_PORTS_CASES;

/**
 * The behaviour the tenants relay (`TenantsTerm`, `RestingDatabases`) relies on from its ports,
 * pinned on the simulated ports (`SimTenantPorts`, what the tenants family runs) and on
 * MongoDB's (`MongoTenantPorts`) by one suite.
 */
export function tenantPortsContract(
  fixture: () => Promise<TenantPortsFixture>,
  skips: ContractSkips<TenantPortsCase> = {},
): void {
  const test = contractCases(TENANT_PORTS_CASES, skips);
  let f: TenantPortsFixture;
  const open: ChangeCursor[] = [];

  beforeEach(async () => {
    f = await fixture();
  });

  afterEach(async () => {
    for (const cursor of open.splice(0)) await cursor.close();
    await f.close();
  });

  /** Reads `cursor` until `count` changes came (or `reads` reads): their event ids. */
  async function read(cursor: ChangeCursor, count: number, reads = 30): Promise<string[]> {
    const got: string[] = [];
    for (let n = 0; n < reads && got.length < count; n++) {
      const batch = await cursor.next(10);
      got.push(...batch.changes.map((change) => change.event.eventId));
    }
    return got;
  }

  async function subscribe(ports: TenantPorts, database: string): Promise<ChangeCursor> {
    const cursor = await ports.forDatabase(database, 1).changes.open(undefined);
    open.push(cursor);
    return cursor;
  }

  test('listed', async () => {
    const [a, b] = f.names(2);
    const listed = [a];
    const ports = f.ports(() => [...listed]);
    expect(await ports.databases()).toEqual([a]);
    listed.push(b);
    expect(await ports.databases()).toEqual([a, b]);
  });

  test('isolated', async () => {
    const [a, b] = f.names(2);
    const ports = f.ports(() => [a, b]);
    await f.insert(a, [contractEvent('order-1'), contractEvent('order-1')]);
    await f.insert(b, [contractEvent('order-1')]);
    expect((await ports.forDatabase(a, 1).outbox.pendingStats()).count).toBe(2);
    expect((await ports.forDatabase(b, 1).outbox.pendingStats()).count).toBe(1);
  });

  test('pending', async () => {
    const [never, done, waiting] = f.names(3);
    const ports = f.ports(() => [never, done, waiting]);
    await f.insert(done, [contractEvent('order-1', { status: 'published' })]);
    await f.insert(waiting, [contractEvent('order-1', { status: 'published' })]);
    await f.insert(waiting, [contractEvent('order-2')]);
    expect(ports.hasPending).toBeDefined();
    expect(await ports.hasPending!(never)).toBe(false);
    expect(await ports.hasPending!(done)).toBe(false);
    expect(await ports.hasPending!(waiting)).toBe(true);
  });

  test('stream', async () => {
    const [a, b] = f.names(2);
    const ports = f.ports(() => [a, b]);
    const fromA = await subscribe(ports, a);
    const fromB = await subscribe(ports, b);
    const a1 = contractEvent('order-1');
    const b1 = contractEvent('order-1');
    const a2 = contractEvent('order-2');
    await f.insert(a, [a1]);
    await f.insert(b, [b1]);
    await f.insert(a, [a2]);
    expect(await read(fromA, 2)).toEqual([a1.eventId, a2.eventId]);
    expect(await read(fromB, 1)).toEqual([b1.eventId]);
    // Nothing more for either: another read of each brings no change.
    expect((await fromA.next(10)).changes).toEqual([]);
    expect((await fromB.next(10)).changes).toEqual([]);
  });

  test('wakes', async () => {
    const [resting, other] = f.names(2);
    const ports = f.ports(() => [resting, other]);
    const watch = ports.watch;
    expect(watch).toBeDefined();
    const woken: string[] = [];
    const wake = (database: string): boolean => {
      woken.push(database);
      return false; // not woken: it keeps resting
    };
    watch!.watch([resting, other], wake);
    await f.waitFor(() => watch!.covers(resting) && watch!.covers(other), 20_000);
    expect(watch!.covers(resting)).toBe(true);
    await f.insert(resting, [contractEvent('order-1')]);
    await f.waitFor(() => woken.length > 0, 20_000);
    expect(woken[0]).toBe(resting);
    expect(woken).not.toContain(other);
    expect(watch!.covers(resting)).toBe(true);
    watch!.unwatch(wake);
  });

  test('dropped', async () => {
    const [gone, kept] = f.names(2);
    const ports = f.ports(() => [gone, kept]);
    await f.insert(gone, [contractEvent('order-1')]);
    const fromKept = await subscribe(ports, kept);
    await subscribe(ports, gone);
    await f.drop(gone);
    const later = [contractEvent('order-1'), contractEvent('order-2')];
    await f.insert(kept, later);
    expect(await read(fromKept, 2)).toEqual(later.map((event) => event.eventId));
    expect(await ports.hasPending!(gone)).toBe(false);
  });

  test('partition', async () => {
    const [database, unslotted] = f.names(2);
    const layout = { partitions: 2, generation: 1 };
    const whole = f.ports(() => [database, unslotted]);
    const [first, second] = [whole.forPartition(layout, 0), whole.forPartition(layout, 1)];
    const [inFirst, inSecond] = [
      aggregateIn(0, layout.partitions),
      aggregateIn(1, layout.partitions),
    ];
    const fromFirst = await subscribe(first, database);
    const fromSecond = await subscribe(second, database);
    const a = contractEvent(inFirst);
    const b = contractEvent(inSecond);
    await f.insert(database, [a, b]);
    expect(await read(fromFirst, 1)).toEqual([a.eventId]);
    expect(await read(fromSecond, 1)).toEqual([b.eventId]);
    expect((await fromFirst.next(10)).changes).toEqual([]);
    expect((await first.forDatabase(database, 1).outbox.pendingStats()).count).toBe(1);
    expect((await second.forDatabase(database, 1).outbox.pendingStats()).count).toBe(1);
    // Written by something that does not stamp `slot`: each partition's term must look at it.
    const { slot: _slot, ...withoutSlot } = contractEvent(inFirst);
    await f.insert(unslotted, [withoutSlot as OutboxEventRecord]);
    expect(await first.hasPending!(unslotted)).toBe(true);
    expect(await second.hasPending!(unslotted)).toBe(true);
    await f.insert(database, [contractEvent(inFirst, { status: 'published' })]);
    const [empty] = f.names(1);
    await f.insert(empty, [contractEvent(inSecond)]);
    expect(await first.hasPending!(empty)).toBe(false);
    expect(await second.hasPending!(empty)).toBe(true);
  });
}

/** An aggregate id whose slot lies in partition `partition` of `partitions`. */
function aggregateIn(partition: number, partitions: number): string {
  for (let n = 0; ; n++) {
    const id = `order-${n}`;
    if (partitionOfSlot(eventSlot('Order', id), partitions) === partition) return id;
  }
}
