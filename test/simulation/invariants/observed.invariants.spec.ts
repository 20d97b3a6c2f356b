import { runSchedule } from '../simulation.runner';
import type { RunReport } from '../simulation.runner';
import type { Fault, Schedule, SimTransactionData } from '../schedule/schedule.types';
import { calmSchedule } from '../support/schedule.fixtures';
import { realRelay } from '../world/relay.factory';

/**
 * Heavy schedules for the invariants that observe the relay from its ports (d, f, g): each
 * drives the real relay up to the bound its invariant judges, and the real relay holds it.
 * They are what shows each observation bites: with the matching defect put into lib/ (see
 * the README's table), the spec fails on the invariant named.
 */
const fault = (
  kind: Fault['kind'],
  at: number,
  duration: number,
  target = 0,
  param = 0,
): Fault => ({
  kind,
  at,
  duration,
  target,
  param,
});

/** `count` one-event transactions every `everyMs` from `startMs`, spread over `aggregates`. */
function burst(
  count: number,
  everyMs: number,
  startMs: number,
  aggregates: number,
  payloadBytes: number,
  type = 0,
): SimTransactionData[] {
  return Array.from({ length: count }, (_, index) => ({
    at: startMs + index * everyMs,
    writer: index % 2,
    durationMs: 2,
    events: [{ type, aggregate: index % aggregates, payloadBytes }],
  }));
}

function result(report: RunReport, id: string) {
  const found = report.results.find((candidate) => candidate.id === id);
  if (!found) throw new Error(`no result for (${id})`);
  return found;
}

const calm = calmSchedule();

describe('invariants observed at the ports, on heavy schedules (real relay)', () => {
  it('(d) a backlog caught up aggregate by aggregate while the stream goes on fills maxInFlight, never more', async () => {
    const schedule: Schedule = {
      ...calm,
      seed: 7,
      options: {
        ...calm.options,
        batchSize: 4,
        maxInFlight: 12,
        maxInFlightBytes: 1_000_000,
        maxBatchBytes: 8_000,
        maxAttempts: 5,
        backoff: { initialMs: 100, maxMs: 400, jitter: 0 },
      },
      world: { ...calm.world, aggregatesPerType: 24, writers: 2, writerSkewsMs: [0, 0] },
      transactions: burst(300, 8, 1_000, 24, 60),
      faults: [fault('kafka-topic-unauthorized', 1_100, 1_400)],
    };
    const report = await runSchedule(schedule, realRelay);
    const memory = result(report, 'd');
    expect(report.failed.map((failed) => failed.violations)).toEqual([]);
    expect(memory.counts?.['max events held (observed)']).toBe(schedule.options.maxInFlight);
  });

  it('(d) slow acknowledgements with large events fill maxInFlightBytes, never past its slack', async () => {
    const schedule: Schedule = {
      ...calm,
      seed: 8,
      options: {
        ...calm.options,
        batchSize: 8,
        maxInFlight: 48,
        maxInFlightBytes: 3_000,
        maxBatchBytes: 2_000,
      },
      world: {
        ...calm.world,
        aggregatesPerType: 16,
        writers: 2,
        writerSkewsMs: [0, 0],
        requestMaxBytes: 100_000,
      },
      transactions: burst(200, 5, 500, 16, 300),
      faults: [fault('slow-ack', 600, 1_500, 0, 400)],
    };
    const report = await runSchedule(schedule, realRelay);
    const memory = result(report, 'd');
    expect(report.failed.map((failed) => failed.violations)).toEqual([]);
    expect(memory.counts?.['max bytes held (observed)']).toBeGreaterThanOrEqual(
      schedule.options.maxInFlightBytes,
    );
  });

  it.each([1, 2, 3, 4, 5, 6, 7, 8])(
    '(g) a leader paused past its lease while publishing sends nothing once the server says the lease ended (seed %i)',
    async (seed) => {
      const schedule: Schedule = {
        ...calm,
        seed,
        options: {
          ...calm.options,
          batchSize: 1,
          maxInFlight: 3,
          lease: { durationMs: 600, renewMs: 200 },
          idleMs: 20,
          checkpointEvery: { events: 1, ms: 50 },
        },
        world: { ...calm.world, kafkaLatencyMs: 1, dbLatencyMs: 10 },
        relays: { skewsMs: [0, 0] },
        transactions: burst(120, 15, 1_000, 2, 10),
        faults: [
          fault('pause', 1_275 + 37 * seed, 744, 0),
          fault('pause', 2_100 + 29 * seed, 700, 1),
        ],
      };
      const report = await runSchedule(schedule, realRelay);
      expect(report.failed.map((failed) => failed.violations)).toEqual([]);
      expect(result(report, 'g').counts?.['sends judged']).toBeGreaterThan(0);
    },
  );
});
