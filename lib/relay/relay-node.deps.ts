import type { OutboxPublisher } from '../publisher/outbox-publisher.interface';
import type { InFlightBudget } from './engine/in-flight.budget';
import type { ChangeSource } from './ports/change-source';
import type { OutboxRelayStore } from './ports/outbox-relay.store';
import type { RelayClock } from './ports/relay-clock';
import type { RelayLoggerFactory } from './ports/relay-logger';
import type { RelayLayout } from './ports/relay-partitions.store';
import type { RelayStateStore } from './ports/relay-state.store';
import type { OutboxRelayMetrics } from './relay.metrics';
import type { LeaseKeeper } from './lease/lease.keeper';
import type { ResolvedRelayOptions } from './relay.options';
import type { LeaderTerm } from './term/leader-term';
import type { TermEnd } from './term/term-end';

/** Everything a relay instance talks to: the ports the Nest module (or the simulation) fills. */
export interface RelayNodeDeps {
  /** Identifies this process in the lease (host, pid, random suffix). */
  owner: string;
  outbox: OutboxRelayStore;
  state: RelayStateStore;
  changes: ChangeSource;
  publisher: OutboxPublisher;
  clock: RelayClock;
  loggers: RelayLoggerFactory;
  metrics: OutboxRelayMetrics;
  /** Jitter of backoffs; default `Math.random`. */
  random?: () => number;
  /**
   * The in-memory bound of each term (default: one of its own, `maxInFlight` and
   * `maxInFlightBytes`). A partitioned relay gives every partition a share of one.
   */
  budget?: () => InFlightBudget;
  /**
   * When a term ends with publishes abandoned (a stop timed out), leave the lease to expire
   * instead of releasing it, so no other instance starts on these aggregates while the
   * broker client may still retry a request of ours. Default false (released at once).
   */
  keepLeaseAfterAbandon?: boolean;
  /** The term of each lease grant; default one `RelayTerm` (tenant databases: a `TenantsTerm`). */
  terms?: LeaderTermFactory;
  /**
   * The partition of `layout` this node relays (set by `PartitionRelay`; absent: the whole
   * outbox). Its scope's ports are already in `outbox`, `changes` and `state`; a term factory
   * whose ports are its own (`TenantsTerm`) narrows them to it.
   */
  partition?: { layout: RelayLayout; partition: number };
}

/** Makes the term of a lease grant (`RelayNodeDeps.terms`; default: one `RelayTerm`). */
export type LeaderTermFactory = (
  options: ResolvedRelayOptions,
  deps: RelayNodeDeps,
  lease: LeaseKeeper,
  fencing: number | null,
  ended: (why: TermEnd) => void,
) => LeaderTerm;
