/** One sample of the relay's metrics, as the console keeps it. */
export interface MetricsSample {
  /** ms since the epoch (this process's clock) */
  at: number;
  /** The relay's `published` counter at that time. */
  published: number;
  pendingCount?: number;
  oldestPendingAgeMs?: number;
}

/** The last `capacity` samples, oldest first; the oldest is dropped when full. Bounded memory. */
export class MetricsRing {
  private readonly slots: MetricsSample[] = [];
  private next = 0;

  constructor(readonly capacity: number) {}

  push(sample: MetricsSample): void {
    if (this.slots.length < this.capacity) this.slots.push(sample);
    else this.slots[this.next] = sample;
    this.next = (this.next + 1) % this.capacity;
  }

  /** Samples taken at or after `since`, oldest first. */
  since(since: number): MetricsSample[] {
    const ordered =
      this.slots.length < this.capacity
        ? this.slots
        : [...this.slots.slice(this.next), ...this.slots.slice(0, this.next)];
    return ordered.filter((s) => s.at >= since);
  }
}

/** Published events per second between consecutive samples (a counter reset counts as 0). */
export function publishRate(samples: readonly MetricsSample[]): Array<{ t: number; v: number }> {
  const out: Array<{ t: number; v: number }> = [];
  for (let i = 1; i < samples.length; i++) {
    const seconds = (samples[i].at - samples[i - 1].at) / 1000;
    const delta = samples[i].published - samples[i - 1].published;
    if (seconds > 0) out.push({ t: samples[i].at, v: delta >= 0 ? delta / seconds : 0 });
  }
  return out;
}
