import type { Schedule } from './schedule/schedule.types';
import { describeFailure, runSchedule } from './simulation.runner';
import { realRelay } from './world/relay.factory';

/**
 * A layout switch to four partitions while a writer of a version before slots and a current
 * writer take turns on the same aggregates, every few milliseconds, so that both write while
 * the partitions drain: after a drain stamped the missing slots, an event without a slot and
 * then a later one with a slot of the same aggregate commit before the drain's next page. The
 * page must not publish the later one first (the earlier comes on the stream): each page is
 * read with the events without a slot of its aggregates (`withOlderUnslotted`).
 */
function drainWhileBothWrite(dbLatencyMs: number, gapMs: number, relays: number[]): Schedule {
  return {
    seed: 7,
    options: {
      batchSize: 4,
      maxInFlight: 16,
      maxInFlightBytes: 64_000,
      maxBatchBytes: 8_000,
      maxAttempts: 4,
      backoff: { initialMs: 100, maxMs: 1_000, jitter: 0.2 },
      // Slow sweep and backfill: neither puts the events in order by chance.
      sweepIntervalMs: 3_000,
      sweepGraceMs: 3_000,
      checkpointEvery: { events: 4, ms: 200 },
      lease: { durationMs: 1_500, renewMs: 300 },
      idleMs: 100,
      shutdownTimeoutMs: 500,
      partitions: 4,
    },
    world: {
      topics: [{ type: 'Order', partitions: 3 }],
      aggregatesPerType: 2,
      writers: 2,
      writerSkewsMs: [0, 0],
      // Shared aggregates (sequence order is commit order).
      aggregateSequence: true,
      oplogWindowMs: 600_000,
      messageMaxBytes: 100_000,
      requestMaxBytes: 1_000_000,
      dbLatencyMs,
      kafkaLatencyMs: 2,
      majorityLagMs: 5,
      unslottedWriters: [1],
    },
    relays: { skewsMs: relays },
    transactions: Array.from({ length: 200 }, (_, index) => ({
      at: index * gapMs,
      writer: index % 2,
      durationMs: 5,
      events: [{ type: 0, aggregate: (index >> 1) % 2, payloadBytes: 100 }],
    })),
    faults: [],
  };
}

describe('events written before slots, while partitions drain', () => {
  it.each([
    [10, 7, [0]],
    [2, 3, [0, 300]],
  ])(
    'keep their aggregate’s order (db latency %i ms, a transaction every %i ms, relays %j)',
    async (latency, gap, relays) => {
      const report = await runSchedule(drainWhileBothWrite(latency, gap, relays), realRelay);
      if (report.failed.length > 0) throw new Error(describeFailure(report));
      const order = report.results.find((result) => result.id === 'b');
      expect(order?.counts?.['aggregates written both with and without a slot']).toBe(2);
      expect(report.history.storeOps.some((op) => op.name === 'stampMissingSlots')).toBe(true);
    },
    60_000,
  );
});
