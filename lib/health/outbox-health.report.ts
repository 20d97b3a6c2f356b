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
    heldDestinations: HeldDestination[];
    inFlightEvents: number;
  };
  /** The outbox's backlog, read from the collection (any instance sees it). */
  lag: {
    oldestPendingAgeMs?: number;
    /** Refreshed by the leader's sweep; absent on other instances. */
    pendingCount?: number;
    maxLagMs: number;
  };
  /** The stream position saved by the relay, and how old it is on the server's clock. */
  checkpoint: {
    saved: boolean;
    savedAt?: Date;
    /** Time of the position itself: from the resume token, else `savedAt`. */
    positionAt?: Date;
    positionTimeFrom?: 'resume-token' | 'saved-at';
    ageMs?: number;
  };
  oplog: OplogWindow & {
    /** How much of the window the saved position already uses (0-1), when both are known. */
    used?: number;
    maxUse: number;
  };
}
