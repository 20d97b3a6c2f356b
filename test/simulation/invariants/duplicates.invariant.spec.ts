import { SIM_EPOCH_MS } from '../process/sim-process';
import type { LeaseFact } from '../world/sim.history';
import { takeOvers } from './duplicates.invariant';

const lease = (
  kind: LeaseFact['kind'],
  at: number,
  owner: string,
  expiresIn = 1_000,
  scope?: string,
): LeaseFact => ({
  kind,
  at,
  owner,
  node: owner,
  fencing: 1,
  expiresAt: kind === 'release' ? 0 : SIM_EPOCH_MS + at + expiresIn,
  scope,
});

describe('invariant (e): which lease acquires are take-overs (a cause of duplicates)', () => {
  it('a lease released while valid and acquired by the next holder is a graceful hand-over, not a take-over', () => {
    const times = takeOvers([
      lease('acquire', 0, 'a'),
      lease('renew', 500, 'a'),
      lease('release', 900, 'a'),
      lease('acquire', 1_000, 'b'),
    ]);
    expect(times).toEqual([0]);
  });

  it('a lease that ran out before its release (or never released) is taken over', () => {
    const times = takeOvers([
      lease('acquire', 0, 'a'),
      lease('release', 1_500, 'a'),
      lease('acquire', 1_600, 'b'),
      lease('acquire', 5_000, 'c'),
    ]);
    expect(times).toEqual([0, 1_600, 5_000]);
  });

  it('judges each lease scope (partition) on its own', () => {
    const times = takeOvers([
      lease('acquire', 0, 'a', 1_000, 'p0'),
      lease('acquire', 0, 'a', 1_000, 'p1'),
      lease('release', 500, 'a', 0, 'p0'),
      lease('acquire', 600, 'b', 1_000, 'p0'),
      lease('acquire', 2_000, 'b', 1_000, 'p1'),
    ]);
    expect(times).toEqual([0, 0, 2_000]);
  });

  it('a renewal that lands after the lease ran out is a lapse, counted at the renewal', () => {
    const times = takeOvers([
      lease('acquire', 0, 'a'),
      lease('renew', 500, 'a'),
      lease('renew', 1_400, 'a'),
      lease('renew', 2_500, 'a'),
      lease('release', 2_600, 'a'),
      lease('acquire', 2_700, 'b'),
    ]);
    expect(times).toEqual([0, 2_500]);
  });
});
