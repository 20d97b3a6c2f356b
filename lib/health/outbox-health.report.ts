import type { HeldDestination, RelayStatus, StreamState } from '../relay/relay.status';
import type { OplogWindow } from './oplog-window.probe';

/** Thresholds of `OutboxHealthIndicator`. */
export interface OutboxHealthOptions {
  /** Down when the oldest pending event is older than this, ms. Default 60 000. */
  maxLagMs?: number;
  /**
   * Down when the saved stream position is older than this share of the oplog window (0-1):
   * a relay that starts from it later than the rest of the window falls off the oplog. Default 0.5.
   */
  maxOplogWindowUse?: number;
  /** Whose checkpoint to read. Default `relay.name`, or `default` in an app without a relay. */
  relayName?: string;
}

export const HEALTH_DEFAULTS = { maxLagMs: 60_000, maxOplogWindowUse: 0.5 } as const;

/** What `OutboxHealthIndicator.health()` found. */
export interface OutboxHealthReport {
  healthy: boolean;
  /** Why it is not healthy, one sentence each (empty when healthy). */
  problems: string[];
  /** This process's relay; absent when the app runs without one (`relay: false`). */
  relay?: {
    role: RelayStatus['role'];
    stream: StreamState;
    streamError?: string;
    /** Publishing paused (broker unavailable) until this time, ms since the epoch. */
    brokerPausedUntil?: number;
    /** Publishing paused by a configuration error ("configuration error: <error>: ..."): down. */
    configurationError?: string;
    heldDestinations: HeldDestination[];
    inFlightEvents: number;
  };
  /** The outbox's backlog, read from the collection (any instance sees it). */
  lag: {
    oldestPendingAgeMs?: number;
    /** Refreshed by the leader's sweep; absent on other instances. */
    pendingCount?: number;
    maxLagMs: number;
    /**
     * Pending scheduled events (with `availableAt`), read from the collection: not lag until
     * due; once due, how long the oldest has waited counts against `maxLagMs` like the lag.
     */
    scheduled: ScheduledHealth;
  };
  /**
   * The stream position saved by the relay, and how old it is on the server's clock. With
   * partitions: the oldest position among the partitions this instance judges (those it
   * holds; every partition in an app without a relay), `partition` saying which.
   */
  checkpoint: CheckpointReport & { partition?: number };
  oplog: OplogWindow & {
    /** How much of the window the saved position already uses (0-1), when both are known. */
    used?: number;
    maxUse: number;
  };
  /**
   * With a stored layout of several partitions (`relay.partitions` > 1): every partition, who
   * holds it, and its lag and position. Absent with one partition.
   */
  partitions?: PartitionsReport;
  /**
   * With partitions: problems of the deployment that this instance cannot fix and that do not
   * make it unhealthy (partitions nobody holds, partitions of other instances lagging), one
   * sentence each. Absent with one partition.
   */
  degraded?: string[];
}

/** The pending scheduled events, on the server's clock. */
export interface ScheduledHealth {
  /** Counted up to 10,000 (`countCapped`: at least that many). */
  count: number;
  countCapped?: true;
  /** The earliest due time still to come. */
  nextDueAt?: Date;
  /** How long the oldest due one has been due and is still pending, ms. */
  oldestOverdueAgeMs?: number;
}

/** A saved stream position, and how old it is on the server's clock. */
export interface CheckpointReport {
  saved: boolean;
  savedAt?: Date;
  /** Time of the position itself: from the resume token, else `savedAt`. */
  positionAt?: Date;
  positionTimeFrom?: 'resume-token' | 'saved-at';
  ageMs?: number;
}

/** The partitions of the stored layout, as this instance sees them. */
export interface PartitionsReport {
  /** Partitions of the stored layout, and its generation. */
  count: number;
  generation: number;
  /** This instance's `relay.partitions` (absent without a relay). */
  configured?: number;
  /** Partitions this instance holds. */
  owned: number[];
  /** Partitions without a live lease (the server's clock): nobody relays their events now. */
  unheld: number[];
  each: PartitionHealth[];
}

/** One partition of the stored layout. */
export interface PartitionHealth {
  partition: number;
  /** Holder of its live lease (this instance's name for its own); absent: nobody holds it. */
  owner?: string;
  /** Whether this instance holds it. */
  owned: boolean;
  /** Fencing number of its lease. */
  fencing?: number;
  /** Its stream on this instance while owned, else `stopped`. */
  stream: StreamState;
  /** Its events held in memory (while owned). */
  inFlightEvents?: number;
  /** Its pending events at its last sweep (while owned). */
  pendingCount?: number;
  /** Age of its oldest pending event, read from the collection (server clock). */
  oldestPendingAgeMs?: number;
  /** Its saved stream position. */
  checkpoint: CheckpointReport;
}
