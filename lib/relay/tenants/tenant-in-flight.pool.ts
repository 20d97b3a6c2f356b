import { InFlightShares } from '../engine/in-flight.shares';

/**
 * `maxInFlight` and `maxInFlightBytes` of one relay instance, shared by the engines of its tenant
 * databases, however many: each engine may reserve a page beside an idle read (`2 x batchSize`
 * events, or its equal part when that is larger), and a read starts only while the events and
 * bytes all engines HOLD stay within the whole. Unlike partitions (a few, each an equal part),
 * a thousand databases cannot each get a page out of `maxInFlight`, and most of them only wait
 * on an idle read: so reads in flight are not counted against the whole, and memory is bounded
 * by `maxInFlight` plus at most one page read per database.
 */
export class TenantInFlight extends InFlightShares {
  constructor(
    maxEvents: number,
    maxBytes: number,
    private readonly page: { events: number; bytes: number },
  ) {
    super(maxEvents, maxBytes);
  }

  limitOf(): { events: number; bytes: number } {
    return {
      events: Math.min(
        this.maxEvents,
        Math.max(2 * this.page.events, Math.floor(this.maxEvents / this.sharing)),
      ),
      bytes: Math.min(
        this.maxBytes,
        Math.max(2 * this.page.bytes, Math.floor(this.maxBytes / this.sharing)),
      ),
    };
  }

  allows(events: number): boolean {
    return this.events + events <= this.maxEvents && this.bytes < this.maxBytes;
  }
}
