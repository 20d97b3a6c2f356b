import type { SimMonitor, SimRunOutcome, SimWorld } from '../world/sim-world';

/** What one invariant found in one run. */
export interface InvariantResult {
  id: string;
  name: string;
  /** How many things it checked (events, checkpoint writes, samples...). */
  checked: number;
  violations: string[];
  /** Extra counts worth reporting (duplicates by cause...). */
  counts?: Record<string, number>;
}

/** One invariant: watches the run (optional) and judges it at the end. */
export interface InvariantChecker extends SimMonitor {
  readonly id: string;
  readonly name: string;
  finish(world: SimWorld, outcome: SimRunOutcome): InvariantResult;
}

/** Keeps reports short: the first `limit` violations and a count of the rest. */
export function capped(violations: string[], limit = 8): string[] {
  if (violations.length <= limit) return violations;
  return [...violations.slice(0, limit), `... and ${violations.length - limit} more`];
}
