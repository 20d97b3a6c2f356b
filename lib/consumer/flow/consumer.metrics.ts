import { Injectable } from '@nestjs/common';

export interface OutboxConsumerMetricsSnapshot {
  /** Events applied (the handler ran and its transaction committed). */
  applied: number;
  /** Deliveries skipped because the `(consumer, eventId)` was already applied. */
  duplicates: number;
  /** Failed attempts: handler errors, timeouts, and rejections before the handler (guards, pipes). */
  failures: number;
  /** Attempts that exceeded `handlerTimeoutMs` (also counted in `failures`). */
  timeouts: number;
  /** Messages dead-lettered (bad input, `maxFailures` reached, `UnrecoverableEventError`). */
  deadLettered: number;
  /** Times a partition was paused (failure store unavailable, module not ready, redelivery backoff). */
  partitionPauses: number;
  /** Batches of events applied in one transaction each (`consumer.batch`). */
  batches: number;
  /** Batches aborted and applied again one event at a time (a failure, a duplicate, the budget). */
  batchFallbacks: number;
  /** Duration of handler attempts, ms (timeouts count with their timeout). */
  handlerDuration: { count: number; sumMs: number; maxMs: number };
}

/**
 * Counters of the `@IdempotentHandler` consumers of one `OutboxModule`; inject it to export
 * `snapshot()` to your monitoring. Alert on `deadLettered`, on a growing `failures` rate and on
 * `partitionPauses`.
 */
@Injectable()
export class OutboxConsumerMetrics {
  applied = 0;
  duplicates = 0;
  failures = 0;
  timeouts = 0;
  deadLettered = 0;
  partitionPauses = 0;
  batches = 0;
  batchFallbacks = 0;
  private readonly durations = { count: 0, sumMs: 0, maxMs: 0 };

  handlerDuration(ms: number): void {
    this.durations.count++;
    this.durations.sumMs += ms;
    if (ms > this.durations.maxMs) this.durations.maxMs = ms;
  }

  snapshot(): OutboxConsumerMetricsSnapshot {
    return {
      applied: this.applied,
      duplicates: this.duplicates,
      failures: this.failures,
      timeouts: this.timeouts,
      deadLettered: this.deadLettered,
      partitionPauses: this.partitionPauses,
      batches: this.batches,
      batchFallbacks: this.batchFallbacks,
      handlerDuration: { ...this.durations },
    };
  }
}
