import type { SimRunOutcome, SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/**
 * The run's own preconditions: the code under test took time and randomness only from its
 * ports (no real timers, `Date.now`, `Math.random` from lib/), and kept the ports' contracts
 * (a message for a partition its topic has); and a produce request carries at most
 * `maxBatchBytes`, unless it is one message alone (issue 10, defect 9).
 */
export class SimContractInvariant implements InvariantChecker {
  readonly id = 'x';
  readonly name = 'ports only (determinism, contracts)';

  finish(world: SimWorld, outcome: SimRunOutcome): InvariantResult {
    const limit = world.schedule.options.maxBatchBytes;
    const oversized = world.history.sendCalls.filter(
      (call) => call.bytes > limit && call.eventIds.length > 1,
    );
    const violations = [
      ...outcome.realTimeUses.map((use) => `lib/ used ${use.api} directly: ${use.at}`),
      ...world.history.contractViolations,
      ...oversized.map(
        (call) =>
          `${call.issuedAt}: ${call.node} sent ${call.eventIds.length} messages in ${call.bytes} bytes (maxBatchBytes ${limit})`,
      ),
    ];
    return {
      id: this.id,
      name: this.name,
      checked: 1 + world.history.sendCalls.length,
      violations: capped(violations),
    };
  }
}
