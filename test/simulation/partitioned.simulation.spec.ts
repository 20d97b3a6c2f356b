import {
  partitionedSchedules,
  rollingDeploy,
  withPartitions,
} from './schedule/partitioned.arbitrary';
import { scheduledScheduleArbitrary } from './schedule/schedule.arbitrary';
import type { Schedule } from './schedule/schedule.types';
import { handOverSchedules } from './schedule/stop-under-load.arbitrary';
import { describeFailure, runSchedule } from './simulation.runner';
import type { RunReport, SimStats } from './simulation.runner';
import { expectInvariants } from './support/expect-invariants';
import { realRelay } from './world/relay.factory';

/**
 * The partitioned relay (lib/'s PartitionedRelayNode over the simulated partition ports)
 * under generated schedules: 2-8 partitions, 2-3 relays that join, leave (graceful stop), die
 * (crash) and pause (GC) while partitions change hands, and layout switches by rolling
 * deploys. Every invariant of the single-relay simulation, plus (p): one effective owner per
 * partition, a fair spread at the end, the stored layout is the live relays'. Then hand-overs
 * with publishes in flight (a backlog drained while relays join and leave), and partitioned
 * schedules with scheduled and cancelled events. `SIM_SEED`, `SIM_PARTITIONED_RUNS`,
 * `SIM_HAND_OVER_RUNS` and `SIM_PARTITIONED_SCHEDULED_RUNS` change the seed and the numbers of runs.
 */
const RUNS = Number(process.env.SIM_PARTITIONED_RUNS ?? 180);
const HAND_OVER_RUNS = Number(process.env.SIM_HAND_OVER_RUNS ?? 40);
const SCHEDULED_RUNS = Number(process.env.SIM_PARTITIONED_SCHEDULED_RUNS ?? 60);
const SEED = Number(process.env.SIM_SEED ?? 20_261_201);

/** A fixed world: 3 relays, 40 transactions over 4 aggregates of 2 types, no faults. */
function quietWorld(partitions: number, faults: Schedule['faults']): Schedule {
  const base: Schedule = {
    seed: 14,
    options: {
      batchSize: 4,
      maxInFlight: 16,
      maxInFlightBytes: 64_000,
      maxBatchBytes: 8_000,
      maxAttempts: 4,
      backoff: { initialMs: 100, maxMs: 1_000, jitter: 0.2 },
      sweepIntervalMs: 1_000,
      sweepGraceMs: 1_000,
      checkpointEvery: { events: 4, ms: 200 },
      lease: { durationMs: 1_500, renewMs: 300 },
      idleMs: 100,
      shutdownTimeoutMs: 500,
      partitions,
    },
    world: {
      topics: [
        { type: 'Order', partitions: 3 },
        { type: 'Invoice', partitions: 2 },
      ],
      aggregatesPerType: 4,
      writers: 2,
      writerSkewsMs: [0, 0],
      aggregateSequence: true,
      oplogWindowMs: 600_000,
      messageMaxBytes: 100_000,
      requestMaxBytes: 1_000_000,
      dbLatencyMs: 2,
      kafkaLatencyMs: 2,
      majorityLagMs: 5,
    },
    relays: { skewsMs: [0, 300, -300] },
    transactions: Array.from({ length: 40 }, (_, index) => ({
      at: index * 400,
      writer: index % 2,
      durationMs: 20,
      events: [
        { type: index % 2, aggregate: index % 4, payloadBytes: 100 },
        { type: (index + 1) % 2, aggregate: (index * 3) % 4, payloadBytes: 100 },
      ],
    })),
    faults,
  };
  return withPartitions(base, Math.max(partitions, 4));
}

async function expectClean(schedule: Schedule): Promise<RunReport> {
  const report = await runSchedule(schedule, realRelay);
  if (report.failed.length > 0) {
    throw new Error(`${describeFailure(report)}\nschedule: ${JSON.stringify(schedule)}`);
  }
  expect(report.outcome.resolvedAt).toBeDefined();
  expect(report.history.appends.length).toBeGreaterThanOrEqual(80);
  return report;
}

const switches = (report: RunReport) =>
  report.history.layoutSwitches.map((change) => change.partitions);

describe('partitioned relays under simulated churn', () => {
  const families = [
    {
      claim: `keep every invariant over ${RUNS} partitioned schedules`,
      ...{ runs: RUNS, arbitrary: partitionedSchedules(), flags: '--partitioned' },
      exercised: (stats: SimStats) => expect(stats.invariants.get('p')?.checked).toBeGreaterThan(0),
    },
    {
      claim: `publish nothing twice because of a hand-over with publishes in flight, over ${HAND_OVER_RUNS} schedules`,
      ...{ runs: HAND_OVER_RUNS, arbitrary: handOverSchedules, flags: '--hand-overs' },
      exercised: (stats: SimStats) => expect(stats.faults.get('leave')).toBeGreaterThan(0),
    },
    {
      // Each partition's due reader, across joins, leaves, crashes, pauses and layout switches.
      claim: `keep every invariant with scheduled and cancelled events over ${SCHEDULED_RUNS} partitioned schedules`,
      runs: SCHEDULED_RUNS,
      arbitrary: partitionedSchedules(undefined, scheduledScheduleArbitrary),
      flags: '--partitioned --scheduled',
      exercised: (stats: SimStats) => {
        for (const id of ['p', 's1', 's2', 's3']) {
          const checked = stats.invariants.get(id)?.checked ?? 0;
          expect({ id, exercised: checked > 0 }).toEqual({ id, exercised: true });
        }
      },
    },
  ];
  for (const { claim, runs, arbitrary, flags, exercised } of families) {
    it(
      `${claim} (seed ${SEED})`,
      async () => {
        const result = await expectInvariants({ runs, seed: SEED }, arbitrary, ` ${flags}`);
        exercised(result.stats);
      },
      15 * 60_000,
    );
  }

  it('switch from one partition to four by a rolling deploy while events flow', async () => {
    const schedule = quietWorld(1, rollingDeploy(3, 4_000, 1_500, 4));
    const report = await expectClean(schedule);
    expect(switches(report)).toEqual([4]);
  }, 60_000);

  it('switch from four partitions back to one', async () => {
    const schedule = quietWorld(4, rollingDeploy(3, 4_000, 1_500, 1));
    const report = await expectClean(schedule);
    expect(switches(report)).toEqual([4, 1]);
  }, 60_000);

  it('publishes events written without a slot (a writer of a version before slots)', async () => {
    const base = quietWorld(4, [
      { kind: 'crash', at: 5_000, duration: 1_000, target: 0, param: 0 },
    ]);
    const schedule = {
      ...base,
      world: { ...base.world, aggregateSequence: false, unslottedWriters: [1] },
    };
    const report = await expectClean(schedule);
    const unslotted = [...report.history.commits.values()].filter((c) => c.slot === undefined);
    expect(unslotted.length).toBeGreaterThanOrEqual(40);
    expect(report.history.storeOps.some((op) => op.name === 'stampMissingSlots')).toBe(true);
  }, 60_000);

  it('keeps the order of aggregates shared by a pre-slot and a current writer across a switch from one partition to four, with events pending', async () => {
    const base = quietWorld(1, [
      { kind: 'broker-outage', at: 3_000, duration: 3_000, target: 0, param: 0 },
      ...rollingDeploy(3, 4_000, 600, 4),
    ]);
    const schedule = {
      ...base,
      world: { ...base.world, unslottedWriters: [1] },
      // Writer 1 (before slots) takes four transactions in turn with writer 0: every aggregate
      // gets events of both.
      transactions: base.transactions.map((tx, index) => ({ ...tx, writer: (index >> 2) % 2 })),
    };
    const report = await expectClean(schedule);
    expect(switches(report)).toEqual([4]);
    const order = report.results.find((result) => result.id === 'b');
    expect(order?.counts?.['aggregates written both with and without a slot']).toBe(8);
  }, 60_000);

  it('replays a partitioned run exactly (same schedule, same trace)', async () => {
    const schedule = quietWorld(3, [
      { kind: 'leave', at: 2_000, duration: 1_000, target: 0, param: 0 },
      { kind: 'pause', at: 4_000, duration: 2_000, target: 1, param: 0 },
    ]);
    const first = await runSchedule(schedule, realRelay);
    const second = await runSchedule(schedule, realRelay);
    expect(second.outcome.traceHash).toBe(first.outcome.traceHash);
    expect(first.outcome.realTimeUses).toEqual([]);
  }, 60_000);

  it('hand partitions over while one relay leaves, one dies and one pauses', async () => {
    const schedule = quietWorld(6, [
      { kind: 'leave', at: 3_000, duration: 2_000, target: 0, param: 0 },
      { kind: 'crash', at: 6_000, duration: 3_000, target: 1, param: 0 },
      { kind: 'pause', at: 9_000, duration: 2_500, target: 2, param: 0 },
      { kind: 'leave', at: 11_000, duration: 500, target: 1, param: 0 },
    ]);
    const report = await expectClean(schedule);
    const acquired = report.history.leases.filter((lease) => lease.kind === 'acquire');
    expect(acquired.length).toBeGreaterThan(6 + 4); // every partition, then hand-overs
    expect(new Set(acquired.map((lease) => lease.node)).size).toBe(3);
  }, 60_000);
});
