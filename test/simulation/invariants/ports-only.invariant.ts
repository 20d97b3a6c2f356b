import type { SimRunOutcome, SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/**
 * The run's own preconditions: the code under test took time and randomness only from its
 * ports (no real timers, `Date.now`, `Math.random` from lib/), and kept the ports' contracts
 * (e.g. a message for a partition its topic has).
 */
export class SimContractInvariant implements InvariantChecker {
  readonly id = 'x';
  readonly name = 'ports only (determinism, contracts)';

  finish(world: SimWorld, outcome: SimRunOutcome): InvariantResult {
    const violations = [
      ...outcome.realTimeUses.map((use) => `lib/ used ${use.api} directly: ${use.at}`),
      ...world.history.contractViolations,
    ];
    return {
      id: this.id,
      name: this.name,
      checked: 1,
      violations: capped(violations),
    };
  }
}
