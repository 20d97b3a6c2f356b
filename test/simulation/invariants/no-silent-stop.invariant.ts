import type { SimRunOutcome, SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/**
 * (h) No silent stop: at the end (faults over, everything published), exactly one live relay
 * is leader, it is the lease holder, its stream is `following`, and it still renews its lease
 * and sweeps; `stop()` of every relay finishes and does not throw; no promise rejection went
 * unhandled.
 */
export class NoSilentStopInvariant implements InvariantChecker {
  readonly id = 'h';
  readonly name = 'no silent stop';
  private readonly violations: string[] = [];
  private checked = 0;

  beforeStop(world: SimWorld): void {
    // Partitioned runs with more than one partition: (p) judges who holds what at the end.
    if (world.partitioned && (world.db.layout?.partitions ?? 1) > 1) return;
    const options = world.schedule.options;
    const now = world.now;
    const statuses = world.statuses();
    const leaders = statuses.filter(({ status }) => status.role === 'leader');
    this.checked++;
    if (leaders.length !== 1) {
      this.violations.push(
        `${now}: ${leaders.length} live relays say they are leader (${statuses
          .map(({ node, status }) => `${node.process.name}: ${status.role}/${status.stream}`)
          .join(', ')})`,
      );
      return;
    }
    const { node, status } = leaders[0];
    const owner = node.owner ?? '?';
    if (!world.db.holdsLease(owner)) {
      this.violations.push(
        `${now}: ${node.process.name} says it is leader but does not hold the lease`,
      );
    }
    if (status.stream !== 'following') {
      this.violations.push(
        `${now}: the leader's stream is ${status.stream}${status.streamError ? ` (${status.streamError})` : ''}, not following`,
      );
    }
    const issuedSince = (names: string[], since: number): boolean =>
      world.history.storeOps.some(
        (op) => op.owner === owner && names.includes(op.name) && op.issuedAt >= since,
      );
    // A leader since less than a period has not had to do it yet.
    const leaderSince = Math.max(
      0,
      ...world.history.leases
        .filter((lease) => lease.owner === owner && lease.kind === 'acquire')
        .map((lease) => lease.at),
    );
    const due = (periodMs: number): boolean =>
      now - leaderSince >= periodMs + 2 * options.idleMs + 200;
    if (
      due(options.lease.renewMs) &&
      !issuedSince(['renewLease'], now - 2 * options.lease.renewMs - 100)
    ) {
      this.violations.push(
        `${now}: the leader did not renew its lease in the last ${2 * options.lease.renewMs} ms`,
      );
    }
    if (
      due(options.sweepIntervalMs) &&
      !issuedSince(
        ['findStaleEvents', 'pendingStats', 'findMarkedDead'],
        now - 2 * options.sweepIntervalMs - 100,
      )
    ) {
      this.violations.push(
        `${now}: the leader did not sweep in the last ${2 * options.sweepIntervalMs} ms`,
      );
    }
  }

  finish(world: SimWorld, outcome: SimRunOutcome): InvariantResult {
    const violations = [
      ...this.violations,
      ...outcome.stopProblems,
      ...world.history.unhandled.map((reason) => `unhandled rejection: ${reason}`),
    ];
    return {
      id: this.id,
      name: this.name,
      checked: this.checked + 1,
      violations: capped(violations),
    };
  }
}
