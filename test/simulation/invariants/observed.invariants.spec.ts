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

  it.each([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])(
    '(g) a relay paused while its first send of a partition waits for metadata sends nothing after its lease ended (variant %i)',
    async (variant) => {
      // The saved finding (3 relays, 3 partitions, a pause longer than the lease), with the
      // pause starting a millisecond later each time, so it falls at every step between the
      // owner's lease check and its send.
      const schedule: Schedule = {
        ...calm,
        seed: 1987516717,
        options: {
          ...calm.options,
          batchSize: 1,
          maxInFlight: 3,
          maxInFlightBytes: 3_072,
          maxBatchBytes: 1_024,
          maxAttempts: 2,
          backoff: { initialMs: 20, maxMs: 40, jitter: 0 },
          sweepIntervalMs: 300,
          sweepGraceMs: 0,
          checkpointEvery: { events: 1, ms: 50 },
          lease: { durationMs: 600, renewMs: 200 },
          idleMs: 20,
          shutdownTimeoutMs: 0,
          partitions: 3,
        },
        world: {
          ...calm.world,
          topics: [{ type: 'Order', partitions: 1 }],
          aggregatesPerType: 1,
          writers: 2,
          writerSkewsMs: [0, 0],
          aggregateSequence: false,
          messageMaxBytes: 1_200,
          requestMaxBytes: 3_048,
          dbLatencyMs: 10,
          kafkaLatencyMs: 1,
          majorityLagMs: 0,
        },
        relays: { skewsMs: [0, 0, 0] },
        transactions: [
          {
            at: 1_187,
            writer: 1,
            durationMs: 40,
            events: [{ type: 0, aggregate: 0, payloadBytes: 10 }],
          },
        ],
        faults: [fault('pause', 1_269 + variant, 744 - variant, 0)],
      };
      const report = await runSchedule(schedule, realRelay);
      expect(report.failed.map((failed) => failed.violations)).toEqual([]);
      expect(result(report, 'g').counts?.['sends judged']).toBeGreaterThan(0);
    },
  );

  it('(f) a topic refusing for seconds, with a long backoff, does not hold back the other topic', async () => {
    const schedule: Schedule = {
      ...calm,
      seed: 11,
      options: {
        ...calm.options,
        maxAttempts: 20,
        backoff: { initialMs: 1_000, maxMs: 4_000, jitter: 0 },
      },
      world: {
        ...calm.world,
        topics: [
          { type: 'Order', partitions: 2 },
          { type: 'Invoice', partitions: 2 },
        ],
        aggregatesPerType: 4,
      },
      transactions: [
        ...burst(60, 100, 1_000, 4, 40, 0),
        ...burst(60, 100, 1_050, 4, 40, 1).map((tx) => ({ ...tx, writer: 0 })),
      ],
      faults: [fault('kafka-topic-unauthorized', 900, 14_000, 0)],
    };
    const report = await runSchedule(schedule, realRelay);
    expect(report.failed.map((failed) => failed.violations)).toEqual([]);
    expect(result(report, 'f').checked).toBeGreaterThan(30);
  });
});
