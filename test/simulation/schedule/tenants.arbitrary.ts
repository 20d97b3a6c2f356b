import fc from 'fast-check';
import { rollingDeploy, withPartitions } from './partitioned.arbitrary';
import { faultOf, normalize, scheduleArbitrary } from './schedule.arbitrary';
import { ACTIVE_PHASE_MS, TENANT_FAULT_KINDS } from './schedule.types';
import type { Fault, FaultKind, Schedule, SimTransactionData } from './schedule.types';

/**
 * Tenants (issue 33): the relay runs with the `tenants` option (one cluster-wide stream, one
 * `TenantsTerm` per lease term) over 2-50 tenant databases of one replica set, 1-2 relays;
 * one run in three with `relay.partitions` 2-3 (a `TenantsTerm` per held partition, over the
 * tenant ports narrowed to its slots, each with a cluster-wide stream of its own).
 * - 20-60 transactions of 1-3 events, each in a random tenant's database, over 1-3 aggregates
 *   per type (the same aggregate ids in every database: one aggregate per database each);
 * - 1-3 databases written before they are listed (a backlog), most of them listed later
 *   (`tenant-added`), and 1-4 list changes or drops: `tenant-added`, `tenant-removed` (its
 *   pending events stay pending), `database-dropped` (its outbox gone, still listed), each
 *   with the sweep interval as its window (the relay reads the list every sweep interval);
 * - up to 2 flaps: the database of a transaction let go right after it commits and listed
 *   again 0.2-2.5 sweep intervals later, half of them while the broker acknowledges slowly (a
 *   term that is still ending, its publishes in flight, when its database is listed again);
 * - 0-4 faults of the kinds that disturb one relay or the whole deployment: crashes (at a
 *   port call too), pauses, the broker down or slow, a stepdown (it rolls back in every
 *   database at once), a lost stream position (the cluster-wide stream's, so every followed
 *   database drains: with one stream for all, positions are lost for all at once), cursor
 *   and transient database errors.
 * - in about half of the partitioned runs, a layout switch: from one partition to 2-3 or back,
 *   every relay leaving in turn and coming back with the other layout.
 * Scheduled events, cancellations and poison events are left to their families.
 */
const RELAY_AND_DEPLOYMENT_KINDS: readonly FaultKind[] = [
  'crash',
  'crash-at-call',
  'pause',
  'broker-outage',
  'slow-ack',
  'stepdown',
  'oplog-rollover',
  'cursor-error',
  'db-transient-before',
  'db-transient-after',
];

const tenantsArbitrary = fc.record({
  base: scheduleArbitrary,
  databases: fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 2, max: 8 }) },
    { weight: 1, arbitrary: fc.integer({ min: 9, max: 50 }) },
  ),
  /** Databases listed only later (the last ones). */
  unlisted: fc.integer({ min: 1, max: 3 }),
  relays: fc.integer({ min: 1, max: 2 }),
  transactions: fc.array(
    fc.record({
      at: fc.integer({ min: 0, max: ACTIVE_PHASE_MS }),
      writer: fc.nat({ max: 3 }),
      durationMs: fc.integer({ min: 1, max: 60 }),
      tenant: fc.nat({ max: 49 }),
      events: fc.array(
        fc.record({
          type: fc.nat({ max: 3 }),
          aggregate: fc.nat({ max: 2 }),
          payloadBytes: fc.integer({ min: 20, max: 600 }),
        }),
        { minLength: 1, maxLength: 3 },
      ),
    }),
    { minLength: 20, maxLength: 60 },
  ),
  listChanges: fc.array(
    fc.record({
      kind: fc.constantFrom(...TENANT_FAULT_KINDS),
      at: fc.integer({ min: 0, max: ACTIVE_PHASE_MS }),
      target: fc.nat({ max: 49 }),
    }),
    { minLength: 1, maxLength: 4 },
  ),
  added: fc.array(fc.integer({ min: 0, max: ACTIVE_PHASE_MS }), { minLength: 1, maxLength: 3 }),
  /** A busy database let go and listed again soon after (its term may still be ending). */
  flaps: fc.array(
    fc.record({
      tx: fc.nat({ max: 59 }),
      delayMs: fc.integer({ min: 0, max: 200 }),
      /** In sweep intervals. */
      gap: fc.double({ min: 0.2, max: 2.5, noNaN: true }),
      /** The broker acknowledges slowly meanwhile (the let-go term's publishes linger). */
      slowAck: fc.boolean(),
    }),
    { maxLength: 2 },
  ),
  faults: fc.array(faultOf(RELAY_AND_DEPLOYMENT_KINDS), { maxLength: 4 }),
});

export const tenantSchedules: fc.Arbitrary<Schedule> = tenantsArbitrary.map((raw) => {
  const { base, databases } = raw;
  const unlisted = Math.min(raw.unlisted, databases - 1);
  const window = base.options.sweepIntervalMs;
  const transactions: SimTransactionData[] = raw.transactions.map((tx) => ({
    ...tx,
    tenant: tx.tenant % databases,
  }));
  // The databases listed only later get some of the first writes (their backlog).
  transactions.slice(0, unlisted).forEach((tx, index) => (tx.tenant = databases - 1 - index));
  const slowAcks: Fault[] = [];
  const added = raw.added
    .slice(0, unlisted)
    .map((at, index) => ({ kind: 'tenant-added' as const, at, target: databases - 1 - index }));
  const flaps = raw.flaps.flatMap(({ tx, delayMs, gap, slowAck }) => {
    const { at, durationMs, tenant } = transactions[tx % transactions.length];
    const removedAt = at + durationMs + delayMs;
    if (slowAck) {
      const lingers = base.options.shutdownTimeoutMs + window;
      slowAcks.push({ kind: 'slow-ack', at, duration: 2 * window, target: 0, param: lingers });
    }
    return [
      { kind: 'tenant-removed' as const, at: removedAt, target: tenant as number },
      {
        kind: 'tenant-added' as const,
        at: removedAt + Math.round(gap * window),
        target: tenant as number,
      },
    ];
  });
  const tenantFaults = [...raw.listChanges, ...added, ...flaps].map((change) => ({
    ...change,
    target: change.target % databases,
    duration: window,
    param: 0,
  }));
  // `relay.partitions`: 2-3 in about one run in three, else 1; derived from what is drawn
  // already, so that the schedules of one partition are those the family drew before.
  const partitions = raw.transactions.length % 3 === 0 ? 2 + (raw.databases % 2) : 1;
  const deploy = {
    ...base,
    options: { ...base.options, partitions: undefined, idempotent: undefined },
  };
  // A layout switch in about half of those: the relays start with one partition (or with
  // `partitions`) and each rolls over to the other while events flow (`rollingDeploy`), the
  // tenant ports of the new layout taking every database over from the old one's.
  const switched = partitions > 1 && raw.faults.length % 2 === 0;
  const relays = Math.min(raw.relays, base.relays.skewsMs.length);
  const from = relays === 1 ? 1 : partitions;
  const layout = switched
    ? {
        ...withPartitions(deploy, partitions),
        options: { ...withPartitions(deploy, partitions).options, partitions: from },
      }
    : partitions > 1
      ? withPartitions(deploy, partitions)
      : deploy;
  const switches = switched
    ? rollingDeploy(
        relays,
        1_000 + (raw.added[0] % 11_000),
        60 * raw.transactions[0].durationMs,
        from === 1 ? partitions : 1,
      )
    : [];
  return normalize({
    ...layout,
    world: {
      ...base.world,
      writers: Math.max(1, base.world.writers),
      sharedAggregates: undefined,
      unslottedWriters: undefined,
      unslottedUntilMs: undefined,
      tenants: {
        databases,
        listed: Array.from({ length: databases - unlisted }, (_, index) => index),
      },
    },
    relays: { skewsMs: base.relays.skewsMs.slice(0, relays) },
    transactions,
    faults: [...tenantFaults, ...slowAcks, ...raw.faults, ...switches],
  });
});
