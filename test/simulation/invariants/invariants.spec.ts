import { runSchedule } from '../simulation.runner';
import type { RunReport } from '../simulation.runner';
import type { Fault, Schedule } from '../schedule/schedule.types';
import { calmSchedule, steadyWrites } from '../support/schedule.fixtures';
import { ToyRelay } from '../toy/toy.relay';
import type { ToyBugs } from '../toy/toy.relay';

/**
 * The invariants judged on a deliberately simple relay (`ToyRelay`): it passes a calm
 * schedule, and each bug it can be built with is caught by the invariant that should catch it.
 */
async function runToy(schedule: Schedule, bugs: ToyBugs = {}): Promise<RunReport> {
  return runSchedule(schedule, (ports) => new ToyRelay(ports, bugs));
}

function failedIds(report: RunReport): string[] {
  return report.failed.map((result) => result.id);
}

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

describe('invariants, judged on the toy relay', () => {
  it('all hold for a correct relay on a calm schedule, and each checked something', async () => {
    const report = await runToy(calmSchedule());
    expect(report.failed).toEqual([]);
    const checked = Object.fromEntries(report.results.map((result) => [result.id, result.checked]));
    expect(checked).toMatchObject({ a: 6, b: 6 });
    expect(checked.c).toBeGreaterThan(0);
    expect(checked.d).toBeGreaterThan(0);
    expect(checked.g).toBeGreaterThan(0);
  });

  it('(a) catches an event nobody publishes (committed before the stream opened, no drain, no sweep)', async () => {
    const schedule = calmSchedule({
      world: { ...calmSchedule().world, majorityLagMs: 0 },
      transactions: [
        { at: 0, writer: 0, durationMs: 1, events: [{ type: 0, aggregate: 0, payloadBytes: 10 }] },
      ],
    });
    expect(failedIds(await runToy(schedule, { noSweep: true, noDrain: true }))).toContain('a');
  });

  it('(b) catches events of one aggregate published out of commit order', async () => {
    const schedule = calmSchedule({
      world: { ...calmSchedule().world, majorityLagMs: 0 },
      transactions: [
        { at: 0, writer: 0, durationMs: 1, events: [{ type: 0, aggregate: 0, payloadBytes: 10 }] },
        { at: 1, writer: 0, durationMs: 1, events: [{ type: 0, aggregate: 0, payloadBytes: 10 }] },
      ],
    });
    const report = await runToy(schedule, { drainNewestFirst: true });
    expect(failedIds(report)).toContain('b');
  });

  it('(c) catches a checkpoint saved before the broker acknowledged', async () => {
    const schedule = calmSchedule({ faults: [fault('broker-outage', 900, 2_000)] });
    expect(failedIds(await runToy(schedule, { checkpointBeforeAck: true }))).toContain('c');
  });

  it('(d) catches a relay reading more events than maxInFlight (measured at its ports)', async () => {
    const schedule = calmSchedule({
      transactions: [
        {
          at: 1_000,
          writer: 0,
          durationMs: 3,
          events: Array.from({ length: 12 }, (_, index) => ({
            type: 0,
            aggregate: index % 2,
            payloadBytes: 40,
          })),
        },
      ],
    });
    expect(failedIds(await runToy(schedule))).toEqual([]);
    expect(failedIds(await runToy(schedule, { readsPastBound: true }))).toEqual(['d']);
  });

  it('(e) catches a duplicate without a crash, failover, ambiguous ack or failed write', async () => {
    const report = await runToy(calmSchedule(), { publishTwice: true });
    expect(failedIds(report)).toEqual(['e']);
  });

  it('(f) catches a refusing topic holding back another topic', async () => {
    const schedule = calmSchedule({
      world: {
        ...calmSchedule().world,
        topics: [
          { type: 'Order', partitions: 1 },
          { type: 'Invoice', partitions: 1 },
        ],
      },
      transactions: [
        ...steadyWrites(1, 100, 1_000).map((tx) => ({
          ...tx,
          events: [{ ...tx.events[0], type: 1 }],
        })),
        ...steadyWrites(20, 200, 1_200),
      ],
      faults: [fault('kafka-topic-unauthorized', 900, 6_000, 1)],
    });
    expect(failedIds(await runToy(schedule))).toContain('f');
  });

  it('(g) catches relay writes without a fence', async () => {
    expect(failedIds(await runToy(calmSchedule(), { unfenced: true }))).toEqual(['g']);
  });

  it('(g) catches a send after the lease ended by the server clock (paused past it)', async () => {
    const schedule = calmSchedule({
      transactions: steadyWrites(20, 100, 1_000),
      faults: [fault('pause', 1_250, 1_700, 0)],
    });
    expect(failedIds(await runToy(schedule))).toEqual([]);
    const report = await runToy(schedule, { noLeaseCheck: true });
    expect(failedIds(report)).toContain('g');
    const fencing = report.failed.find((result) => result.id === 'g');
    expect(fencing?.violations.join('\n')).toMatch(/without single's lease/);
  });

  it('(h) catches a stream that stopped without saying so', async () => {
    const schedule = calmSchedule({ faults: [fault('cursor-error', 1_500, 1_000, 0, 100)] });
    expect(failedIds(await runToy(schedule, { streamGivesUp: true }))).toContain('h');
  });
});
