import fc from 'fast-check';
import { runSchedule } from './simulation.runner';
import { scheduleArbitrary } from './schedule/schedule.arbitrary';
import { realRelay } from './world/relay.factory';

describe('relay simulation determinism', () => {
  it('runs the same schedule to the same trace, byte for byte', async () => {
    const [schedule] = fc.sample(scheduleArbitrary, { numRuns: 1, seed: 4242 });
    const first = await runSchedule(schedule, realRelay);
    const second = await runSchedule(schedule, realRelay);
    expect(first.outcome.steps).toBeGreaterThan(100);
    expect(second.outcome.traceHash).toBe(first.outcome.traceHash);
    expect(second.outcome.steps).toBe(first.outcome.steps);
    expect(second.history.appends).toEqual(first.history.appends);
  });

  it('runs a schedule with a different seed differently', async () => {
    const [schedule] = fc.sample(scheduleArbitrary, { numRuns: 1, seed: 4242 });
    const first = await runSchedule(schedule, realRelay);
    const other = await runSchedule({ ...schedule, seed: schedule.seed + 1 }, realRelay);
    expect(other.outcome.traceHash).not.toBe(first.outcome.traceHash);
  });
});
