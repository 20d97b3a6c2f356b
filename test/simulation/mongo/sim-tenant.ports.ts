import type { SlotRange } from '../../../lib/relay/ports/partition-layout';
import type { RelayClock } from '../../../lib/relay/ports/relay-clock';
import type { RelayLogger } from '../../../lib/relay/ports/relay-logger';
import type { RelayLayout } from '../../../lib/relay/ports/relay-partitions.store';
import type { RelayStateStore } from '../../../lib/relay/ports/relay-state.store';
import type { ResolvedRelayOptions } from '../../../lib/relay/relay.options';
import { ClusterCheckpointState } from '../../../lib/relay/tenants/cluster-checkpoint.state';
import { ClusterStreamHub } from '../../../lib/relay/tenants/cluster-stream.hub';
import { PartitionPorts } from '../../../lib/relay/tenants/partition-ports';
import { tenantDatabases } from '../../../lib/relay/tenants/tenant-databases';
import type { TenantDatabasePorts, TenantPorts } from '../../../lib/relay/tenants/tenant.ports';
import type { ResolvedTenantsOptions } from '../../../lib/tenants/tenants.resolved';
import { SimChangeSource } from './sim-change.source';
import { partitionScope } from './sim-database';
import { SimOutboxStore } from './sim-outbox.store';
import { SimStateStore } from './sim-state.store';
import type { SimPartitionContext } from './sim-partitions.store';

export interface SimTenantPortsDeps {
  context: SimPartitionContext;
  /** The relay state in the app's database (the lease, the relay's checkpoint document). */
  appState: RelayStateStore;
  tenants: Pick<ResolvedTenantsOptions, 'databases' | 'stream'>;
  relay: ResolvedRelayOptions;
  clock: RelayClock;
  random: () => number;
  logger: RelayLogger;
}

/**
 * `TenantPorts` over the simulated replica set, wired as `MongoTenantPorts` wires MongoDB's:
 * lib's `ClusterStreamHub` over one cluster-wide stream (a `SimChangeSource` filtered on the
 * followed databases, `ns.db`), lib's `ClusterCheckpointState` over the app database's relay
 * state, lib's `tenantDatabases` over the option's list, and each database's outbox read and
 * written in its own namespace. The tenant databases are namespaces of the one `SimDatabase`
 * (one oplog, one majority point, one stepdown for all), because that is what a MongoDB
 * deployment is: several `SimDatabase`s would give each tenant its own elections and its own
 * oplog window, and a cluster-wide stream could not order their changes in one sequence with
 * one resume token. Only the cluster-wide stream (the default) is modelled.
 */
export class SimTenantPorts implements TenantPorts {
  private readonly stores = new Map<string, SimOutboxStore>();
  private readonly hub: ClusterStreamHub;
  private readonly clusterState: ClusterCheckpointState;
  readonly watch: ClusterStreamHub;

  /** The ports of each partition of the current layout (as `MongoTenantPorts`). */
  private readonly partitions = new PartitionPorts(
    (range, layout, partition) =>
      new SimTenantPorts(this.deps, { range, leaseScope: partitionScope(layout, partition) }),
  );

  constructor(
    private readonly deps: SimTenantPortsDeps,
    /** One partition's slots and lease scope (`forPartition`); undefined: every slot. */
    private readonly partition?: { range: SlotRange; leaseScope: string },
  ) {
    if (deps.tenants.stream !== 'cluster') {
      throw new Error(
        "The simulation models the cluster-wide stream only (tenants.stream: 'cluster').",
      );
    }
    const { context, relay } = deps;
    // A partition's checkpoint document is its scope's, as its lease (`partitionScope`).
    const state = partition
      ? new SimStateStore(
          context.connection,
          context.db,
          context.history,
          context.node,
          context.onCheckpoint,
          partition.leaseScope,
        )
      : deps.appState;
    this.clusterState = new ClusterCheckpointState(state);
    this.hub = new ClusterStreamHub(relay, {
      source: (databases) =>
        new SimChangeSource(
          context.connection,
          context.streams,
          context.history,
          context.faults,
          context.random.fork(`cluster-stream:${partition?.leaseScope ?? 'single'}`),
          { ...context.stream, databases, range: partition?.range },
        ),
      clock: deps.clock,
      random: deps.random,
      logger: deps.logger,
    });
    this.watch = this.hub;
  }

  databases(): Promise<readonly string[]> {
    // A list or a function never lists the server's databases (no pattern in the simulation).
    return tenantDatabases(this.deps.tenants.databases, () =>
      Promise.reject(new Error('the simulation gives tenants.databases as a function')),
    );
  }

  forPartition(layout: RelayLayout, partition: number): TenantPorts {
    return layout.partitions === 1 ? this : this.partitions.of(layout, partition);
  }

  hasPending(database: string): Promise<boolean> {
    return this.store(database).hasPending();
  }

  forDatabase(database: string): TenantDatabasePorts {
    return {
      outbox: this.store(database),
      state: this.clusterState,
      changes: this.hub.source(database),
    };
  }

  private store(database: string): SimOutboxStore {
    let store = this.stores.get(database);
    if (!store) {
      const { connection, db, history } = this.deps.context;
      store = new SimOutboxStore(connection, db, history, this.partition, database);
      this.stores.set(database, store);
    }
    return store;
  }
}
