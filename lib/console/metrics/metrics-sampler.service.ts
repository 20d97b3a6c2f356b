import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { OUTBOX_CONSOLE_OPTIONS } from '../console.constants';
import type { ResolvedConsoleOptions } from '../console.options';
import { ConsoleSources } from '../console.sources';
import { MetricsRing, type MetricsSample } from './metrics-ring';

/** How long the charts look back. */
export const CHART_WINDOW_MS = 15 * 60_000;

/**
 * Samples the relay's own metrics (`OutboxRelayMetrics`: published counter, pending count and
 * oldest pending age, refreshed by its sweeps) every `sampleIntervalMs` into a ring holding 15
 * minutes: what the overview's charts draw. No database read.
 */
@Injectable()
export class MetricsSampler implements OnApplicationBootstrap, OnModuleDestroy {
  readonly ring: MetricsRing;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly sources: ConsoleSources,
    @Inject(OUTBOX_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions,
  ) {
    this.ring = new MetricsRing(Math.ceil(CHART_WINDOW_MS / options.sampleIntervalMs) + 1);
  }

  onApplicationBootstrap(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.options.sampleIntervalMs);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
  }

  sample(now = Date.now()): MetricsSample {
    const m = this.sources.relayMetrics.snapshot();
    const sample = {
      at: now,
      published: m.published,
      pendingCount: m.pendingCount,
      oldestPendingAgeMs: m.oldestPendingAgeMs,
    };
    this.ring.push(sample);
    return sample;
  }
}
