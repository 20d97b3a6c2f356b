import type { HeldDestination, StreamState, TenantDatabaseStatus } from '../relay.status';

/** What a term reports to its node's `status()`. */
export interface TermStatus {
  stream: StreamState;
  streamError?: string;
  inFlight: { events: number; bytes: number };
  trackedAggregates: number;
  heldDestinations: HeldDestination[];
  brokerPausedUntil?: number;
  configurationError?: string;
  /** With tenant databases: each followed or let-go database. */
  tenants?: TenantDatabaseStatus[];
}

/** One leadership term as `RelayNode` runs it: a `RelayTerm`, or a `TenantsTerm` over many databases. */
export interface LeaderTerm {
  readonly fencing: number | null;
  start(): void;
  /** Ends it (see `RelayTerm.end`); false when publishes were abandoned. */
  end(timeoutMs: number): Promise<boolean>;
  status(): TermStatus;
}
