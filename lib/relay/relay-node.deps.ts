import type { OutboxPublisher } from '../publisher/outbox-publisher.interface';
import type { ChangeSource } from './ports/change-source';
import type { OutboxRelayStore } from './ports/outbox-relay.store';
import type { RelayClock } from './ports/relay-clock';
import type { RelayLoggerFactory } from './ports/relay-logger';
import type { RelayStateStore } from './ports/relay-state.store';
import type { OutboxRelayMetrics } from './relay.metrics';

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
}
