import { InFlightBudget, type InFlightPool } from './in-flight.budget';

/**
 * One instance's `maxInFlight` and `maxInFlightBytes`, shared by the budgets of its engines
 * (`share()` one each; closing it gives its part back): what they hold is summed here, and a
 * budget that held less wakes the others. How the whole is divided (`limitOf`) and when a read
 * may start (`allows`) is the policy of each kind of sharing: `SharedInFlight` (the partitions
 * of an instance) and `TenantInFlight` (the tenant databases of a term).
 */
export abstract class InFlightShares implements InFlightPool {
  private readonly shares = new Set<InFlightBudget>();

  constructor(
    readonly maxEvents: number,
    readonly maxBytes: number,
  ) {}

  abstract limitOf(share: InFlightBudget): { events: number; bytes: number };

  abstract allows(events: number): boolean;

  /** A budget for one more engine; closing it gives its part back. */
  share(): InFlightBudget {
    const budget = new InFlightBudget(this.maxEvents, this.maxBytes, this);
    this.shares.add(budget);
    return budget;
  }

  /** Events all budgets hold. */
  get events(): number {
    return this.total((share) => share.events);
  }

  /** Bytes all budgets hold. */
  get bytes(): number {
    return this.total((share) => share.bytes);
  }

  freed(from: InFlightBudget): void {
    for (const share of this.shares) if (share !== from) share.wake();
  }

  detach(share: InFlightBudget): void {
    if (this.shares.delete(share)) this.freed(share);
  }

  /** How many budgets share the whole now (at least 1). */
  protected get sharing(): number {
    return Math.max(1, this.shares.size);
  }

  protected total(of: (share: InFlightBudget) => number): number {
    let total = 0;
    for (const share of this.shares) total += of(share);
    return total;
  }
}
