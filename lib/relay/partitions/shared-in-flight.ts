import { InFlightShares } from '../engine/in-flight.shares';

/**
 * `maxInFlight` and `maxInFlightBytes` of one instance, shared by the engines of the
 * partitions it owns: each gets an equal part (at least one batch: the options check that
 * `maxInFlight >= partitions x batchSize`), and together they never hold more than the whole.
 * When the instance takes another partition, the others' parts shrink; the newcomer waits
 * until they drained below it.
 */
export class SharedInFlight extends InFlightShares {
  limitOf(): { events: number; bytes: number } {
    return {
      events: Math.floor(this.maxEvents / this.sharing),
      bytes: Math.floor(this.maxBytes / this.sharing),
    };
  }

  /** Reads in flight count: the events held and reserved stay within the whole. */
  allows(events: number): boolean {
    const committed = this.total((share) => share.committed);
    return committed + events <= this.maxEvents && this.bytes < this.maxBytes;
  }
}
