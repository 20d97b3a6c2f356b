import { Injectable } from '@nestjs/common';

export interface OutboxRelayMetricsSnapshot {
  /** Events acknowledged by the broker (counted once per publish, duplicates included). */
  published: number;
  /** Failed publish attempts that were scheduled for a retry. */
  retried: number;
  /** Events moved to the dead-letter collection. */
  deadLettered: number;
  /** Times the resume position was lost and the relay recovered from the collection. */
  recoveries: number;
  /** Times publishing paused because the broker was unavailable. */
  outages: number;
  /** Pending events in the outbox (refreshed by each sweep). */
  pendingCount: number | undefined;
  /** Age of the oldest pending event, ms (refreshed by each sweep; scheduled events not counted). */
  oldestPendingAgeMs: number | undefined;
  /** Pending scheduled events (with `availableAt`), due or not (refreshed by each sweep). */
  scheduledCount: number | undefined;
  /** The earliest due time still to come, ms since the epoch on the server's clock (each sweep). */
  nextDueAt: number | undefined;
  /** How long the oldest due scheduled event has been due and is still pending, ms (each sweep). */
  oldestOverdueAgeMs: number | undefined;
  /** Time since the last checkpoint write, ms. */
  checkpointAgeMs: number | undefined;
  /** Whether this instance holds the lease and publishes. */
  leader: boolean;
}

/** Counters and gauges of the relay; inject it to export them to your monitoring. */
@Injectable()
export class OutboxRelayMetrics {
  published = 0;
  retried = 0;
  deadLettered = 0;
  recoveries = 0;
  outages = 0;
  pendingCount: number | undefined;
  oldestPendingAgeMs: number | undefined;
  scheduledCount: number | undefined;
  nextDueAt: number | undefined;
  oldestOverdueAgeMs: number | undefined;
  /** When the last checkpoint was written, by the database server's clock (ms). */
  lastCheckpointAt: number | undefined;
  leader = false;
  /**
   * The database server's time as the relay estimates it (ms), which `lastCheckpointAt` is on;
   * the relay sets it (this process's wall clock until then).
   */
  serverNow: () => number = Date.now;

  get checkpointAgeMs(): number | undefined {
    return this.lastCheckpointAt === undefined
      ? undefined
      : this.serverNow() - this.lastCheckpointAt;
  }

  snapshot(): OutboxRelayMetricsSnapshot {
    return {
      published: this.published,
      retried: this.retried,
      deadLettered: this.deadLettered,
      recoveries: this.recoveries,
      outages: this.outages,
      pendingCount: this.pendingCount,
      oldestPendingAgeMs: this.oldestPendingAgeMs,
      scheduledCount: this.scheduledCount,
      nextDueAt: this.nextDueAt,
      oldestOverdueAgeMs: this.oldestOverdueAgeMs,
      checkpointAgeMs: this.checkpointAgeMs,
      leader: this.leader,
    };
  }
}
