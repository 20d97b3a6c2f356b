import type { Schedule, SimTransactionData } from '../schedule/schedule.types';

/** A small schedule without faults: one relay, one topic of two partitions, relaxed timings. */
export function calmSchedule(overrides: Partial<Schedule> = {}): Schedule {
  return {
    seed: 1,
    options: {
      batchSize: 4,
      maxInFlight: 8,
      maxInFlightBytes: 20_000,
      maxBatchBytes: 4_000,
      maxAttempts: 3,
      backoff: { initialMs: 50, maxMs: 400, jitter: 0 },
      sweepIntervalMs: 500,
      sweepGraceMs: 500,
      checkpointEvery: { events: 2, ms: 100 },
      lease: { durationMs: 1_500, renewMs: 300 },
      idleMs: 50,
      shutdownTimeoutMs: 500,
    },
    world: {
      topics: [{ type: 'Order', partitions: 2 }],
      aggregatesPerType: 2,
      writers: 1,
      writerSkewsMs: [0],
      aggregateSequence: true,
      oplogWindowMs: 600_000,
      messageMaxBytes: 4_000,
      requestMaxBytes: 40_000,
      dbLatencyMs: 2,
      kafkaLatencyMs: 2,
      majorityLagMs: 5,
    },
    relays: { skewsMs: [0] },
    transactions: steadyWrites(6, 200, 1_000),
    faults: [],
    ...overrides,
  };
}

/** `count` one-event transactions every `everyMs` from `startMs`, over two aggregates. */
export function steadyWrites(
  count: number,
  everyMs: number,
  startMs: number,
): SimTransactionData[] {
  return Array.from({ length: count }, (_, index) => ({
    at: startMs + index * everyMs,
    writer: 0,
    durationMs: 3,
    events: [{ type: 0, aggregate: index % 2, payloadBytes: 40 }],
  }));
}
