import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import type { OutboxPublisher } from '../../publisher/outbox-publisher.interface';
import type { OutboxRelayStore } from '../ports/outbox-relay.store';
import type { RelayClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import type { OutboxRelayMetrics } from '../relay.metrics';
import type { ResolvedRelayOptions } from '../relay.options';
import type { RelayWrites } from '../term/fenced.writes';
import type { Settle } from './aggregate.lane';
import type { InFlightBudget } from './in-flight.budget';

/** The relay's options the engine reads (`publishConcurrency`: never two calls with one aggregate). */
export type RelayEngineOptions = Pick<ResolvedRelayOptions, 'batchSize' | 'maxBatchBytes'> &
  Pick<ResolvedRelayOptions, 'maxInFlight' | 'maxInFlightBytes' | 'maxAttempts' | 'backoff'> &
  Pick<ResolvedRelayOptions, 'publishConcurrency'> & {
    /** Catch-up pages read at once. Default 4. */
    readConcurrency?: number;
  };

export interface RelayEngineDeps {
  outbox: Pick<OutboxRelayStore, 'findPendingOfAggregates' | 'findRetryingAggregates'>;
  writes: RelayWrites;
  publisher: OutboxPublisher;
  clock: RelayClock;
  /** The database server's time as this process estimates it (stamps and retry times), ms. */
  now: () => number;
  /** A time read from the server: catch-ups take scheduled events due by it (default: none). */
  dueBy?: () => Date;
  /** False stops publishing (the lease ran out, or the term ends). */
  canPublish: () => boolean;
  /**
   * False once the term ends (default: always true): a read answered after that is not taken in
   * and no catch-up read starts, though the engine closes only once the stream follower stopped.
   */
  takingWork?: () => boolean;
  /** Whether the lease is still valid (default: always); `close` abandons publishes at once when not. */
  leaseValid?: () => boolean;
  random: () => number;
  logger: RelayLogger;
  /** Speaks of destination holds (`RelayDestinations`). */
  holdsLogger: RelayLogger;
  metrics: OutboxRelayMetrics;
  /**
   * The in-memory bound to use instead of one of its own (`maxInFlight`, `maxInFlightBytes`):
   * a partitioned relay shares one budget among its partitions' engines.
   */
  budget?: InFlightBudget;
}

/** An event offered by the change stream or the drain, and what to call once its fate is durable. */
export interface Offer {
  event: OutboxEventRecord;
  settle: Settle;
}
