import type { KafkaSender } from '../../../lib/publisher/kafka/kafka.sender';
import type { ChangeSource } from '../../../lib/relay/ports/change-source';
import type { OutboxRelayStore } from '../../../lib/relay/ports/outbox-relay.store';
import type { RelayClock } from '../../../lib/relay/ports/relay-clock';
import type { RelayLoggerFactory } from '../../../lib/relay/ports/relay-logger';
import type { RelayPartitionPorts } from '../../../lib/relay/ports/relay-partitions.store';
import type { RelayStateStore } from '../../../lib/relay/ports/relay-state.store';
import type { ResolvedRelayOptions } from '../../../lib/relay/relay.options';
import type { RelayStatus } from '../../../lib/relay/relay.status';
import type { TenantPorts } from '../../../lib/relay/tenants/tenant.ports';
import type { ResolvedTenantsOptions } from '../../../lib/tenants/tenants.resolved';
import type { SimRelayOptionsData } from '../schedule/schedule.types';

/** What the simulation needs of a relay instance (lib/'s `OutboxRelay`). */
export interface RelayUnderTest {
  start(): Promise<void>;
  /** Never throws. */
  stop(): Promise<void>;
  status(): RelayStatus;
}

/** Everything one relay process gets from the simulated world. */
export interface SimRelayPorts {
  owner: string;
  outbox: OutboxRelayStore;
  state: RelayStateStore;
  changes: ChangeSource;
  sender: KafkaSender;
  clock: RelayClock;
  loggers: RelayLoggerFactory;
  random: () => number;
  options: SimRelayOptionsData;
  /** The partition ports (production's OutboxRelay always runs a PartitionedRelayNode). */
  partitions?: RelayPartitionPorts;
  /** Topic prefix the publisher must use (`sim.`). */
  topicPrefix: string;
  /**
   * Tenants family: the `tenants` option's database list (a function, re-read every sweep
   * interval) and the tenant ports built from the options as the module resolved them.
   */
  tenants?: {
    databases: () => readonly string[];
    ports: (relay: ResolvedRelayOptions, tenants: ResolvedTenantsOptions) => TenantPorts;
  };
  /** Counts what the run did, for `npm run simulate`'s summary (`SimHistory.countEffect`). */
  countEffect?: (kind: string, count?: number) => void;
}

/** Builds the relay under test over the simulated ports. */
export type RelayFactory = (ports: SimRelayPorts) => RelayUnderTest;
