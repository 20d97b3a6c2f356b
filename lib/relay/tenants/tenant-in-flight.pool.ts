import { InFlightBudget, type InFlightPool } from '../engine/in-flight.budget';

/**
 * `maxInFlight` and `maxInFlightBytes` of one relay instance, shared by the engines of its tenant
 * databases, however many: each engine may reserve a page beside an idle read (`2 x batchSize`
 * events, or its equal part when that is larger), and a read starts only while the events and
 * bytes all engines HOLD stay within the whole. Unlike partitions (a few, each an equal part),
 * a thousand databases cannot each get a page out of `maxInFlight`, and most of them only wait
 * on an idle read: so reads in flight are not counted against the whole, and memory is bounded
 * by `maxInFlight` plus at most one page read per database.
 */
export class TenantInFlight implements InFlightPool {
  private readonly shares = new Set<InFlightBudget>();

  constructor(
    readonly maxEvents: number,
    readonly maxBytes: number,
    private readonly page: { events: number; bytes: number },
  ) {}

  /** A budget for one more database; closing it gives its part back. */
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
      events: Math.min(
        this.maxEvents,
        Math.max(2 * this.page.events, Math.floor(this.maxEvents / count)),
      ),
      bytes: Math.min(
        this.maxBytes,
        Math.max(2 * this.page.bytes, Math.floor(this.maxBytes / count)),
      ),
    };
  }

  allows(events: number): boolean {
    return this.events + events <= this.maxEvents && this.bytes < this.maxBytes;
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
