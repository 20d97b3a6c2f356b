import { checkSchedules } from './simulation.runner';
import { ToyRelay } from './toy/toy.relay';

/**
 * A failure is said before shrinking starts, and shrinking ends within its time budget with
 * the smallest failing schedule found so far (a catch never surfaces as a test timeout).
 */
describe('simulation shrinking', () => {
  it('prints the violation first and stops shrinking at its time budget', async () => {
    const printed: string[] = [];
    const write = jest
      .spyOn(process.stderr, 'write')
      .mockImplementation((chunk: string | Uint8Array) => {
        printed.push(String(chunk));
        return true;
      });
    try {
      const started = Date.now();
      const result = await checkSchedules({
        runs: 50,
        seed: 7,
        factory: (ports) => new ToyRelay(ports, { publishTwice: true }),
        shrinkTimeLimitMs: 1,
      });
      expect(result.failure?.report.failed.map((failed) => failed.id)).toContain('e');
      expect(printed.join('')).toMatch(/broke an invariant; shrinking for at most 0 s:\n.*\(e\)/s);
      // Without the budget this schedule shrinks for many runs; with it, only the first
      // failure and the candidates already under way are run.
      expect(result.shrinkRuns).toBeLessThan(5);
      expect(Date.now() - started).toBeLessThan(60_000);
    } finally {
      write.mockRestore();
    }
  });
});
