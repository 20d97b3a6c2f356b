/** What one part of the relay is doing now. */
export type StreamState =
  /** Reading the change stream. */
  | 'following'
  /** No usable position: publishing pending events from the collection before following. */
  | 'draining'
  /** The stream failed; it is reopened with backoff from the last safe position. */
  | 'retrying'
  /** Not leader, or stopped. */
  | 'stopped';

/**
 * A destination the relay holds back because it refuses events for now: a topic (`orders`), or
 * one partition of it as `topic#partition` (`orders#3`).
 */
export interface HeldDestination {
  destination: string;
  /** Since when (ms since the epoch, the relay's estimate of the database server's clock). */
  since: number;
  retryAt: number;
  failures: number;
  lastError: string;
}

/** One partition of a partitioned relay (`relay.partitions` > 1), as this instance sees it. */
export interface PartitionStatus {
  partition: number;
  /** The lease holder at the last membership tick (undefined: free); this instance for its own. */
  owner?: string;
  /** Whether this instance holds it and publishes its events. */
  owned: boolean;
  /** The lease's fencing number (of the holder). */
  fencing?: number;
  /** The partition's stream, while this instance owns it (else `stopped`). */
  stream: StreamState;
  /** Events of it held in memory, while owned. */
  inFlight?: { events: number; bytes: number };
  /** Pending events and the age of the oldest (ms), from its last sweep, while owned. */
  pendingCount?: number;
  oldestPendingAgeMs?: number;
}

/** One tenant database, as the leader's term sees it (`tenants` option). */
export interface TenantDatabaseStatus {
  database: string;
  /** `followed`: its events are relayed; `released`: no longer in the list (its pending stay pending). */
  state: 'followed' | 'released';
  /** Its stream (`stopped` once released). */
  stream: StreamState;
  /** Its events held in memory, while followed. */
  inFlight?: { events: number; bytes: number };
  /** Pending events: from its last sweep while followed, counted when it was let go once released. */
  pendingCount?: number;
  oldestPendingAgeMs?: number;
}

/** The relay's state, for health checks and tests. */
export interface RelayStatus {
  running: boolean;
  /** `leader`: holds the lease and publishes; `standby`: another instance does. */
  role: 'leader' | 'standby' | 'stopped';
  /** The fencing number of this instance's lease, while leader. */
  fencing?: number;
  stream: StreamState;
  /** Why the stream is retrying, while it is. */
  streamError?: string;
  /** Publishing paused because the broker is unavailable, until this time (ms, this process's clock). */
  brokerPausedUntil?: number;
  /**
   * Publishing paused because the broker refuses the relay's configuration, credentials or
   * client ("configuration error: UNSUPPORTED_VERSION: ..."), while it lasts.
   */
  configurationError?: string;
  heldDestinations: HeldDestination[];
  /** Events held in memory (queued or being published) and the memory they cost (`maxInFlightBytes`). */
  inFlight: { events: number; bytes: number };
  /** Aggregates the relay tracks (publishing, waiting for a retry, or catching up). */
  trackedAggregates: number;
  /**
   * With `relay.partitions` > 1: every partition of the layout. `role` is then `leader` while
   * this instance owns at least one, and the other fields sum (or take the worst of) its own.
   */
  partitions?: PartitionStatus[];
  /**
   * With the `tenants` option, while leader: every tenant database followed, and those let go
   * during this term. The other fields sum (or take the worst of) the followed ones. With
   * partitions, one entry per database over the partitions this instance holds (each counts
   * its slots only: `combinedTenants`).
   */
  tenants?: TenantDatabaseStatus[];
}
