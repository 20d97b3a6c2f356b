import { describeError } from '../../common/errors/describe-error';
import type { RelayEngine } from '../engine/relay.engine';
import type { OutboxRelayStore } from '../ports/outbox-relay.store';
import type { RelayLogger } from '../ports/relay-logger';
import type { OutboxRelayMetrics } from '../relay.metrics';
import type { ResolvedRelayOptions } from '../relay.options';
import type { RelayWrites } from '../term/fenced.writes';

export interface SweeperDeps {
  outbox: Pick<
    OutboxRelayStore,
    'pendingStats' | 'scheduledStats' | 'findStaleEvents' | 'findMarkedDead'
  >;
  writes: RelayWrites;
  engine: RelayEngine;
  /** Server-time estimate, ms. */
  now: () => number;
  logger: RelayLogger;
  metrics: OutboxRelayMetrics;
  /** The earliest due time of the pending scheduled events (the due reader's backstop). */
  scheduledDue: (at: Date) => void;
}

/**
 * The collection is the source of truth: every `sweepIntervalMs` the sweep refreshes the lag
 * and scheduled-event gauges, finishes dead-letter moves a crash interrupted, and hands the engine the aggregates
 * whose events are pending for longer than `sweepGraceMs` and not waiting for a retry (the
 * stream missed them, or a mark did not land). It scans by `_id` from where the previous sweep
 * stopped, so events of aggregates already tracked cannot starve the others.
 */
export class PendingSweeper {
  private afterId: unknown;

  constructor(
    private readonly options: Pick<ResolvedRelayOptions, 'batchSize' | 'sweepGraceMs'>,
    private readonly deps: SweeperDeps,
  ) {}

  /** One sweep. Never rejects. */
  async sweep(draining: boolean): Promise<void> {
    const { outbox, engine, metrics, logger } = this.deps;
    try {
      const now = this.deps.now();
      const stats = await outbox.pendingStats();
      metrics.pendingCount = stats.count;
      metrics.oldestPendingAgeMs = stats.oldestOccurredAt
        ? Math.max(0, now - stats.oldestOccurredAt.getTime())
        : 0;
      const scheduled = await outbox.scheduledStats(new Date(now));
      metrics.scheduledCount = scheduled.count;
      metrics.nextDueAt = scheduled.nextDueAt?.getTime();
      metrics.oldestOverdueAgeMs = scheduled.oldestOverdueAt
        ? Math.max(0, now - scheduled.oldestOverdueAt.getTime())
        : 0;
      const earliest = scheduled.oldestOverdueAt ?? scheduled.nextDueAt;
      if (earliest) this.deps.scheduledDue(earliest);
      await this.finishDeadLetters();
      engine.rescanMarks();
      if (draining || stats.count === 0) return;
      const limit = this.options.batchSize * 4;
      const stale = await outbox.findStaleEvents(
        this.afterId,
        new Date(now - this.options.sweepGraceMs),
        new Date(now),
        limit,
      );
      this.afterId = stale.length < limit ? undefined : stale[stale.length - 1]._id;
      let started = 0;
      for (const event of stale) {
        if (engine.requestCatchUp(event)) started++;
      }
      if (started > 0) {
        logger.warn(
          `Sweep: ${started} aggregate(s) had events pending for more than ${this.options.sweepGraceMs} ms; publishing them from the collection.`,
        );
      }
    } catch (error) {
      logger.warn(`Sweep failed (retrying next time): ${describeError(error)}`);
    }
  }

  private async finishDeadLetters(): Promise<void> {
    const marked = await this.deps.outbox.findMarkedDead(100);
    for (const event of marked) {
      await this.deps.writes.copyToDeadLetters(event);
      await this.deps.writes.removeDead(event._id);
    }
    if (marked.length > 0) {
      this.deps.logger.log(
        `Finished moving ${marked.length} dead-lettered event(s) to the dead-letter collection.`,
      );
    }
  }
}
