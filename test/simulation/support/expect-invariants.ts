import type fc from 'fast-check';
import type { Schedule } from '../schedule/schedule.types';
import { checkSchedules, describeFailure } from '../simulation.runner';
import { realRelay } from '../world/relay.factory';

/**
 * Runs `runs` schedules of `arbitrary` (default: the single-lease ones) against lib/'s relay and
 * expects every invariant to hold in each; a failure names the shrunk schedule and the command
 * that replays it (`replayFlags`: the family's flags, e.g. ` --scheduled`).
 */
export async function expectInvariants(
  { runs, seed }: { runs: number; seed: number },
  arbitrary: fc.Arbitrary<Schedule> | undefined,
  replayFlags: string,
): Promise<Awaited<ReturnType<typeof checkSchedules>>> {
  const result = await checkSchedules({ runs, seed, factory: realRelay, arbitrary });
  if (result.failure) {
    throw new Error(
      `The relay broke an invariant (after ${result.stats.runs} runs, ${result.shrinkRuns} shrinking runs).\n` +
        `${describeFailure(result.failure.report)}\n` +
        `schedule: ${JSON.stringify(result.failure.schedule)}\n` +
        `replay: ${result.failure.replay}${replayFlags} --verbose`,
    );
  }
  expect(result.stats.runs).toBe(runs);
  for (const [id, entry] of result.stats.invariants) {
    expect({ id, failedRuns: entry.failedRuns }).toEqual({ id, failedRuns: 0 });
  }
  return result;
}
