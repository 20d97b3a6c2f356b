import fc from 'fast-check';
import { normalize, scheduleArbitrary } from './schedule.arbitrary';
import { THE_LEADER } from './schedule.types';
import type { Fault, Schedule, SimTransactionData } from './schedule.types';

/**
 * A take-over while aggregates wait for a retry (issue 35, `term-start-skips-retrying`): single
 * lease, 2-3 relays, one topic of one partition with 2-4 aggregates, written to every 80-300 ms
 * (one event of one aggregate per transaction) from before the refusal until 3-5 s after the
 * take-over, and:
 * - the partition refusing with a retriable error for 0.7-2 s (shorter, kafkajs' own retries
 *   within the call often outlasted it): the aggregates' events fail and wait for a retry a long
 *   backoff later (2-4 s at first), while the checkpoint (every 1-3 events) passes them;
 * - 0-0.9 s after the refusal ends, within that wait, a take-over: a graceful stop of the leader
 *   (the next relay is granted the lease at its next renewal) or a pause of 1.2-2.5 leases (the
 *   lease runs out);
 * - a sweep interval of 3-6 s, so that the new term's sweep comes well after the stream brought
 *   it the waiting aggregates' newer events.
 * A new term must hold the aggregates an earlier one left waiting until their retry: (b) fails
 * when a newer event of one goes out before the older one that waits. (With one or two
 * partitions, one of them refusing, for 0.3-1.5 s, and a take-over up to 1.2 s after it, 22 of
 * 40 runs failed with that mutation; as here, 96 of 100.)
 */
const retryTakeoverArbitrary = fc.record({
  base: scheduleArbitrary,
  relays: fc.array(fc.integer({ min: -500, max: 500 }), { minLength: 2, maxLength: 3 }),
  aggregates: fc.integer({ min: 2, max: 4 }),
  durationMs: fc.integer({ min: 1_000, max: 2_000 }),
  renewDivisor: fc.integer({ min: 3, max: 5 }),
  backoffMs: fc.integer({ min: 2_000, max: 4_000 }),
  maxAttempts: fc.integer({ min: 4, max: 6 }),
  sweepIntervalMs: fc.integer({ min: 3_000, max: 6_000 }),
  checkpointEvents: fc.integer({ min: 1, max: 3 }),
  startMs: fc.integer({ min: 300, max: 2_000 }),
  gapMs: fc.integer({ min: 80, max: 300 }),
  refusal: fc.record({
    offsetMs: fc.integer({ min: 300, max: 1_500 }),
    durationMs: fc.integer({ min: 700, max: 2_000 }),
  }),
  takeover: fc.record({
    /** After the refusal ended. */
    afterMs: fc.integer({ min: 0, max: 900 }),
    kind: fc.constantFrom('leave' as const, 'pause' as const),
    /** A pause's length in leases. */
    leases: fc.double({ min: 1.2, max: 2.5, noNaN: true }),
    restartMs: fc.integer({ min: 0, max: 3_000 }),
  }),
  /** How long the writes go on after the take-over began. */
  tailMs: fc.integer({ min: 3_000, max: 5_000 }),
});

type Raw = typeof retryTakeoverArbitrary extends fc.Arbitrary<infer T> ? T : never;

function refusalWindow(raw: Raw): { from: number; to: number } {
  const from = raw.startMs + raw.refusal.offsetMs;
  return { from, to: from + raw.refusal.durationMs };
}

function takeoverAt(raw: Raw): number {
  return refusalWindow(raw).to + raw.takeover.afterMs;
}

function writes(raw: Raw, writers: number): SimTransactionData[] {
  const until = takeoverAt(raw) + raw.tailMs;
  const count = Math.ceil((until - raw.startMs) / raw.gapMs);
  return Array.from({ length: count }, (_, index) => ({
    at: raw.startMs + index * raw.gapMs,
    writer: index % writers,
    durationMs: 5,
    events: [
      { type: 0, aggregate: index % raw.aggregates, payloadBytes: 50 + ((index * 53) % 400) },
    ],
  }));
}

function faults(raw: Raw): Fault[] {
  const { from, to } = refusalWindow(raw);
  const at = takeoverAt(raw);
  const { kind, leases, restartMs } = raw.takeover;
  return [
    { kind: 'kafka-partition-retriable', at: from, duration: to - from, target: 0, param: 0 },
    kind === 'leave'
      ? { kind, at, duration: restartMs, target: THE_LEADER, param: 0 }
      : { kind, at, duration: Math.round(leases * raw.durationMs), target: THE_LEADER, param: 0 },
  ];
}

export const retryTakeoverSchedules: fc.Arbitrary<Schedule> = retryTakeoverArbitrary.map((raw) => {
  const { base, durationMs } = raw;
  return normalize({
    ...base,
    options: {
      ...base.options,
      maxAttempts: raw.maxAttempts,
      backoff: {
        initialMs: raw.backoffMs,
        maxMs: 2 * raw.backoffMs,
        jitter: base.options.backoff.jitter,
      },
      sweepIntervalMs: raw.sweepIntervalMs,
      checkpointEvery: {
        events: raw.checkpointEvents,
        ms: Math.min(300, base.options.checkpointEvery.ms),
      },
      lease: { durationMs, renewMs: Math.round(durationMs / raw.renewDivisor) },
      shutdownTimeoutMs: Math.min(base.options.shutdownTimeoutMs, durationMs),
    },
    world: {
      ...base.world,
      topics: [{ type: 'Order', partitions: 1 }],
      aggregatesPerType: raw.aggregates,
    },
    relays: { skewsMs: raw.relays },
    transactions: writes(raw, base.world.writers),
    faults: faults(raw),
  });
});
