import { runSchedule } from './simulation.runner';
import { leaseDriftTolerancePpm } from './schedule/schedule.types';
import type { Schedule } from './schedule/schedule.types';
import { calmSchedule, steadyWrites } from './support/schedule.fixtures';
import { realRelay } from './world/relay.factory';

/**
 * Clock-rate drift and the lease (lib/relay/lease/lease.keeper.ts): an instance counts itself
 * leader for `durationMs - ceil(renewMs / 3)` of its own elapsed time after a tick, so its local
 * validity ends before the server's expiry only while its clock runs no slower than
 * `1 - ceil(renewMs / 3) / durationMs` of the server's (`leaseDriftTolerancePpm`). Relay 1 leads
 * with a slow clock; relay 2 joins at 3 s. Within the tolerance, nothing is sent without the
 * lease; far beyond it (a clock at a fifth of real speed: its renewals come after the server's
 * expiry, its local validity lasts five times too long), relay 2 takes the lease by the server's
 * clock while relay 1 still publishes, so sends go out without the lease, both publish the same
 * events (duplicates without a cause, invariant e) and relay 1 writes marks and checkpoints
 * after the server's expiry (invariant g).
 */
function drifting(ppm: number): Schedule {
  const base = calmSchedule();
  return {
    ...base,
    options: { ...base.options, lease: { durationMs: 2_000, renewMs: 500 } },
    transactions: steadyWrites(60, 150, 500),
    faults: [
      { kind: 'clock-drift', at: 0, duration: 30_000, target: 0, param: ppm },
      { kind: 'extra-relay', at: 3_000, duration: 1, target: 0, param: 0 },
    ],
  };
}

async function sendsWithoutLease(ppm: number) {
  const report = await runSchedule(drifting(ppm), realRelay);
  const calls = report.history.sendCalls.filter((call) => call.node === 'relay-1');
  return {
    report,
    calls: calls.length,
    withoutLease: calls.filter((call) => call.issuedWithoutLease).length,
  };
}

describe('clock-rate drift of a leading relay', () => {
  const tolerance = leaseDriftTolerancePpm(drifting(0).options);

  it('within the documented tolerance, sends nothing without the lease', async () => {
    const slow = await sendsWithoutLease(-Math.floor(0.9 * tolerance));
    expect(slow.calls).toBeGreaterThan(0);
    expect(slow.withoutLease).toBe(0);
    expect(slow.report.failed).toEqual([]);
  });

  it('far beyond it (a clock at 20% speed), publishes after the server gave its lease to another relay', async () => {
    const slow = await sendsWithoutLease(-800_000);
    expect(slow.calls).toBeGreaterThan(0);
    expect(slow.withoutLease).toBeGreaterThan(0);
    const taken = slow.report.history.leases.filter((lease) => lease.owner.startsWith('relay-2'));
    expect(taken.length).toBeGreaterThan(0);
    // What breaks: events published by both relays (e) and writes without a valid lease (g).
    expect(slow.report.failed.map((result) => result.id)).toEqual(
      expect.arrayContaining(['e', 'g']),
    );
  });
});
