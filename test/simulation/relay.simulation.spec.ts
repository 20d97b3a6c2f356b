import { checkSchedules, describeFailure } from './simulation.runner';
import { realRelay } from './world/relay.factory';

/**
 * The relay (lib/'s RelayNode and KafkaPublisher) under 2,000 generated fault schedules in the
 * deterministic simulation: invariants (a)-(h) of issue 10 on every run. `SIM_SEED` and
 * `SIM_RUNS` change the seed (default fixed, so CI is reproducible) and the number of runs.
 * A failure names the shrunk schedule and the command that replays it.
 */
const RUNS = Number(process.env.SIM_RUNS ?? 2_000);
const SEED = Number(process.env.SIM_SEED ?? 20_261_201);

describe('relay under simulated faults', () => {
  it(
    `keeps its invariants over ${RUNS} schedules (seed ${SEED})`,
    async () => {
      const result = await checkSchedules({ runs: RUNS, seed: SEED, factory: realRelay });
      if (result.failure) {
        throw new Error(
          `The relay broke an invariant (after ${result.stats.runs} runs, ${result.shrinkRuns} shrinking runs).\n` +
            `${describeFailure(result.failure.report)}\n` +
            `schedule: ${JSON.stringify(result.failure.schedule)}\n` +
            `replay: ${result.failure.replay} --verbose`,
        );
      }
      expect(result.stats.runs).toBe(RUNS);
      for (const [id, entry] of result.stats.invariants) {
        expect({ id, failedRuns: entry.failedRuns }).toEqual({ id, failedRuns: 0 });
      }
    },
    15 * 60_000,
  );
});
