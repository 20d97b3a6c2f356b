import { SIM_EPOCH_MS } from '../process/sim-process';
import type { LeaseFact } from '../world/sim.history';
import { lateLeaseAnswers, takeOvers } from './duplicates.invariant';

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

describe('invariant (e): renewals answered after the relay’s own view of its lease ran out (a lapse)', () => {
  // durationMs 3,000, renewMs 900: the relay counts itself leader for 2,700 ms from its tick.
  const options = { durationMs: 3_000, renewMs: 900 };
  const grant = (kind: LeaseFact['kind'], at: number, readAt: number, opId: number): LeaseFact => ({
    kind,
    at,
    owner: 'a',
    node: 'a',
    fencing: 1,
    expiresAt: SIM_EPOCH_MS + readAt + options.durationMs,
    opId,
  });

  it('a renewal landing in time but answered after the local validity is a lapse, at its answer', () => {
    // Acquired on the server time read at 0: locally valid until 2,700 at the latest. The renewal
    // read the time at 1,000 and landed at 1,600 (server: in time), answered at 2,800.
    const answers = new Map([
      [1, 10],
      [2, 2_800],
    ]);
    const times = lateLeaseAnswers(
      [grant('acquire', 5, 0, 1), grant('renew', 1_600, 1_000, 2)],
      (opId) => answers.get(opId),
      options,
    );
    expect(times).toEqual([2_800]);
  });

  it('a renewal answered within the local validity, or no renewal at all, is none', () => {
    const answers = new Map([
      [1, 10],
      [2, 2_650],
    ]);
    const renewed = [grant('acquire', 5, 0, 1), grant('renew', 1_600, 1_000, 2)];
    expect(lateLeaseAnswers(renewed, (opId) => answers.get(opId), options)).toEqual([]);
    // A stop that lets the local validity run out without renewing, then releases in time.
    const released: LeaseFact = { ...grant('release', 2_900, 0, 3), expiresAt: 0 };
    expect(
      lateLeaseAnswers([grant('acquire', 5, 0, 1), released], (opId) => answers.get(opId), options),
    ).toEqual([]);
  });

  it('a clock that ran slow lengthens the local validity it is judged by', () => {
    const answers = new Map([
      [1, 10],
      [2, 2_800],
    ]);
    const facts = [grant('acquire', 5, 0, 1), grant('renew', 1_600, 1_000, 2)];
    expect(lateLeaseAnswers(facts, (opId) => answers.get(opId), options, 0.95)).toEqual([]);
  });
});
