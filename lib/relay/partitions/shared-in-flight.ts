import { InFlightBudget, type InFlightPool } from '../engine/in-flight.budget';

/**
 * `maxInFlight` and `maxInFlightBytes` of one instance, shared by the engines of the
 * partitions it owns: each gets an equal part (at least one batch: the options check that
 * `maxInFlight >= partitions x batchSize`), and together they never hold more than the whole.
 * When the instance takes another partition, the others' parts shrink; the newcomer waits
 * until they drained below it.
 */
export class SharedInFlight implements InFlightPool {
  private readonly shares = new Set<InFlightBudget>();

  constructor(
    readonly maxEvents: number,
    readonly maxBytes: number,
  ) {}

  /** A budget for one more partition; closing it gives its part back. */
  share(): InFlightBudget {
    const budget = new InFlightBudget(this.maxEvents, this.maxBytes, this);
    this.shares.add(budget);
    return budget;
  }

  get events(): number {
    return this.total((share) => share.events);
  }

  get bytes(): number {
    return this.total((share) => share.bytes);
  }

  limitOf(): { events: number; bytes: number } {
    const count = Math.max(1, this.shares.size);
    return {
      events: Math.floor(this.maxEvents / count),
      bytes: Math.floor(this.maxBytes / count),
    };
  }

  allows(events: number): boolean {
    const committed = this.total((share) => share.committed);
    return committed + events <= this.maxEvents && this.bytes < this.maxBytes;
  }

  freed(from: InFlightBudget): void {
    for (const share of this.shares) if (share !== from) share.wake();
  }

  detach(share: InFlightBudget): void {
    if (this.shares.delete(share)) this.freed(share);
  }

  private total(of: (share: InFlightBudget) => number): number {
    let total = 0;
    for (const share of this.shares) total += of(share);
    return total;
  }
}
