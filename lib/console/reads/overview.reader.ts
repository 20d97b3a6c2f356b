import { Inject, Injectable } from '@nestjs/common';
import type { OutboxConsumerMetricsSnapshot } from '../../consumer/flow/consumer.metrics';
import type { OutboxRelayMetricsSnapshot } from '../../relay/relay.metrics';
import type { RelayStatus } from '../../relay/relay.status';
import { OUTBOX_CONSOLE_OPTIONS } from '../console.constants';
import type { ResolvedConsoleOptions } from '../console.options';
import { ConsoleSources } from '../console.sources';
import { CHART_WINDOW_MS, MetricsSampler } from '../metrics/metrics-sampler.service';
import { publishRate } from '../metrics/metrics-ring';
import type { ChartPoint } from '../render/svg-chart';
import { cappedCount, type CappedCount } from './capped-count';
import { readConsumers, type ConsumerView } from './consumers.reader';
import { readBacklog, type OutboxBacklog } from './outbox-backlog.reader';
import { readRelayLeases, type CheckpointView, type LeaseView } from './relay-leases.reader';

export interface OverviewData {
  at: Date;
  /** This process's relay: its status and metrics (`running: false` when it runs elsewhere). */
  relay: { status: RelayStatus; metrics: OutboxRelayMetricsSnapshot };
  leases: LeaseView[];
  checkpoints: CheckpointView[];
  backlog: OutboxBacklog;
  relayDeadLetters: CappedCount;
  consumers: ConsumerView[];
  consumerTotals: OutboxConsumerMetricsSnapshot;
  charts: {
    from: number;
    to: number;
    published: ChartPoint[];
    lag: ChartPoint[];
    pending: ChartPoint[];
  };
}

/** Everything the overview shows, read in parallel (each read's index: see its reader). */
@Injectable()
export class OverviewReader {
  constructor(
    private readonly sources: ConsoleSources,
    private readonly sampler: MetricsSampler,
    @Inject(OUTBOX_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions,
  ) {}

  async read(): Promise<OverviewData> {
    const now = new Date();
    const collections = this.sources.collections;
    const limit = this.options.countLimit;
    const names = [...new Set([...this.sources.consumersHere(), ...this.options.consumers])];
    const [state, backlog, relayDeadLetters, consumers] = await Promise.all([
      readRelayLeases(collections, now.getTime()),
      readBacklog(collections, limit, now),
      // On the `_id` index: at most `limit` entries.
      cappedCount(collections.deadLetters, {}, limit),
      readConsumers(collections, names, limit),
    ]);
    const samples = this.sampler.ring.since(now.getTime() - CHART_WINDOW_MS);
    const series = (pick: (s: (typeof samples)[number]) => number | undefined) =>
      samples.flatMap((s) => {
        const v = pick(s);
        return v === undefined ? [] : [{ t: s.at, v }];
      });
    return {
      at: now,
      relay: { status: this.sources.relay.status(), metrics: this.sources.relayMetrics.snapshot() },
      ...state,
      backlog,
      relayDeadLetters,
      consumers,
      consumerTotals: this.sources.consumerMetrics.snapshot(),
      charts: {
        from: now.getTime() - CHART_WINDOW_MS,
        to: now.getTime(),
        published: publishRate(samples),
        lag: series((s) => s.oldestPendingAgeMs && s.oldestPendingAgeMs / 1000),
        pending: series((s) => s.pendingCount),
      },
    };
  }
}
