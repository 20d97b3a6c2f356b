/**
 * The run's own random choices (latencies, which op a fault hits...). One seed per run; each
 * part of the world takes its own stream (`fork(label)`), so that a change in how often one
 * part draws does not shift the draws of the others (shrunk schedules stay close to the
 * original). splitmix32: small, fast, and good enough for choosing latencies.
 */
export class SimRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A new, independent stream derived from this seed and `label`. */
  fork(label: string): SimRandom {
    let hash = this.state ^ 0x9e3779b9;
    for (let index = 0; index < label.length; index++) {
      hash = Math.imul(hash ^ label.charCodeAt(index), 0x85ebca6b);
      hash ^= hash >>> 13;
    }
    return new SimRandom(hash);
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    z = (z ^ (z >>> 16)) >>> 0;
    return z / 0x1_0000_0000;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return probability > 0 && this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('SimRandom.pick: no items');
    return items[Math.floor(this.next() * items.length)];
  }
}
