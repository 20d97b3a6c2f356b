/* A measurement window of the process it runs in (a bench child: the relay's own process). */

/**
 * This process from now on: its CPU time, its wall-clock time, and its peak memory, sampled
 * every `sampleMs` by `read` (default `process.memoryUsage()`) until `end()`.
 */
export class ProcessWindow {
  readonly peak = { rss: 0, heapUsed: 0, external: 0 };
  /** The whole sample of the highest RSS (what the process was made of then). */
  peakUsage?: NodeJS.MemoryUsage;
  private readonly cpuAtStart = process.cpuUsage();
  private readonly started = process.hrtime.bigint();
  private readonly sampler: NodeJS.Timeout;

  constructor(
    sampleMs: number,
    private readonly read: () => NodeJS.MemoryUsage = () => process.memoryUsage(),
  ) {
    this.sample();
    this.sampler = setInterval(() => this.sample(), sampleMs);
  }

  sample(): NodeJS.MemoryUsage {
    const usage = this.read();
    if (usage.rss > this.peak.rss) this.peakUsage = usage;
    this.peak.rss = Math.max(this.peak.rss, usage.rss);
    this.peak.heapUsed = Math.max(this.peak.heapUsed, usage.heapUsed);
    this.peak.external = Math.max(this.peak.external, usage.external);
    return usage;
  }

  /** CPU time of this process (user + system) since the window opened, ms. */
  cpuMs(): number {
    const cpu = process.cpuUsage(this.cpuAtStart);
    return (cpu.user + cpu.system) / 1000;
  }

  /** Wall-clock time since the window opened, ms. */
  elapsedMs(): number {
    return Number(process.hrtime.bigint() - this.started) / 1e6;
  }

  /** Stops sampling, after a last sample: the memory at the end. */
  end(): NodeJS.MemoryUsage {
    clearInterval(this.sampler);
    return this.sample();
  }
}
