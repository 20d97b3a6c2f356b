import fc from 'fast-check';
import { partitionedSchedules } from './partitioned.arbitrary';
import { normalize, scheduleArbitrary, scheduledScheduleArbitrary } from './schedule.arbitrary';
import type { Fault, Schedule, SimTransactionData } from './schedule.types';

/**
 * A backlog: `count` transactions written within a few hundred virtual ms from `at`, so that
 * the relay is draining it (reads, batches and publishes in flight) for a while afterwards.
 */
const burstArbitrary = fc.record({
  at: fc.integer({ min: 500, max: 10_000 }),
  count: fc.integer({ min: 15, max: 50 }),
  spreadMs: fc.integer({ min: 50, max: 600 }),
  /** Acknowledgements slowed meanwhile (ms; 0: none), so that publish calls stay in flight. */
  slowAckMs: fc.oneof(fc.constant(0), fc.integer({ min: 20, max: 400 })),
  /** When the stops or hand-overs come, after the burst began (virtual ms). */
  offsets: fc.array(fc.integer({ min: 0, max: 2_000 }), { minLength: 1, maxLength: 3 }),
  /** Relays stopped or joined, by index. */
  targets: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 3, maxLength: 3 }),
  /** Restart delays of the stopped relays (ms). */
  restartMs: fc.integer({ min: 0, max: 3_000 }),
});

type Burst = typeof burstArbitrary extends fc.Arbitrary<infer T> ? T : never;

function backlog(schedule: Schedule, burst: Burst): SimTransactionData[] {
  const { world } = schedule;
  return Array.from({ length: burst.count }, (_, index) => ({
    at: burst.at + Math.floor((index * burst.spreadMs) / burst.count),
    writer: index % world.writers,
    durationMs: 5,
    events: [
      {
        type: index % world.topics.length,
        aggregate: index % world.aggregatesPerType,
        payloadBytes: 50 + ((index * 37) % 300),
      },
    ],
  }));
}

function slowAcks(burst: Burst): Fault[] {
  if (burst.slowAckMs === 0) return [];
  const duration = burst.spreadMs + Math.max(...burst.offsets) + 1_000;
  return [{ kind: 'slow-ack', at: burst.at, duration, target: 0, param: burst.slowAckMs }];
}

/** `stop()` a relay gracefully at each offset (it exits, then starts again after `restartMs`). */
function stopsDuring(burst: Burst): Fault[] {
  return burst.offsets.map((offset, index) => ({
    kind: 'leave' as const,
    at: burst.at + offset,
    duration: burst.restartMs,
    target: burst.targets[index],
    param: 0,
  }));
}

/** A stop that waits for what is in flight (a timeout of 0 abandons it at once). */
function withRoomToStop(schedule: Schedule): Schedule {
  const shutdownTimeoutMs = Math.max(schedule.options.shutdownTimeoutMs, 500);
  return { ...schedule, options: { ...schedule.options, shutdownTimeoutMs } };
}

/**
 * Graceful stops under load: `base`, single-lease schedules (at most two of their faults
 * kept), 2-3 relays, a backlog being drained with acknowledgements maybe slowed, and 1-3
 * graceful stops (`stop()`, exit, restart) while it drains and publishes are in flight.
 * Invariant (e) holds them to "nothing published twice because of the stop".
 */
function gracefulStops(base: fc.Arbitrary<Schedule>): fc.Arbitrary<Schedule> {
  return fc
    .record({
      base,
      burst: burstArbitrary,
      skews: fc.array(fc.integer({ min: -2_000, max: 2_000 }), { minLength: 2, maxLength: 3 }),
    })
    .map(({ base, burst, skews }) =>
      normalize(
        withRoomToStop({
          ...base,
          relays: { skewsMs: skews },
          transactions: [...base.transactions.slice(0, 10), ...backlog(base, burst)],
          faults: [...base.faults.slice(0, 2), ...slowAcks(burst), ...stopsDuring(burst)],
        }),
      ),
    );
}

/**
 * Hand-overs with publishes in flight: `base`, partitioned schedules (churn and layout switches
 * included), with a backlog being drained and acknowledgements maybe slowed, while a relay
 * joins (the others hand partitions over to it) and 1-2 relays stop gracefully (they hand
 * over all of theirs).
 */
function handOvers(base: fc.Arbitrary<Schedule>): fc.Arbitrary<Schedule> {
  return fc.record({ base, burst: burstArbitrary }).map(({ base, burst }) => {
    const join: Fault = {
      kind: 'extra-relay',
      at: burst.at + Math.min(...burst.offsets),
      duration: 1,
      target: 0,
      param: 0,
    };
    const stops = stopsDuring({ ...burst, offsets: burst.offsets.slice(0, 2) });
    return normalize(
      withRoomToStop({
        ...base,
        transactions: [...base.transactions.slice(0, 10), ...backlog(base, burst)],
        faults: [...base.faults.slice(0, 3), ...slowAcks(burst), join, ...stops],
      }),
    );
  });
}

export const gracefulStopSchedules = gracefulStops(scheduleArbitrary);
export const handOverSchedules = handOvers(partitionedSchedules());
/** The same families with scheduled and cancelled events (`--scheduled`, issue #22's seams). */
export const scheduledGracefulStopSchedules = gracefulStops(scheduledScheduleArbitrary);
export const scheduledHandOverSchedules = handOvers(
  partitionedSchedules(undefined, scheduledScheduleArbitrary),
);
