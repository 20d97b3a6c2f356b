import type { mongo } from 'mongoose';
import type { OutboxCollections } from '../../common/outbox-storage.options';
import { relayStateIds } from '../../documents/relay-state.document';
import type { ResolvedTenantsOptions } from '../../tenants/tenants.resolved';
import { MongoChangeSource } from '../mongo/mongo-change.source';
import { MongoOutboxRelayStore } from '../mongo/mongo-outbox-relay.store';
import { MongoRelayStateStore } from '../mongo/mongo-relay-state.store';
import { relayCollection } from '../mongo/relay-collections';
import type { RelayClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import type { ResolvedRelayOptions } from '../relay.options';
import { ClusterCheckpointState } from './cluster-checkpoint.state';
import { ClusterStreamHub } from './cluster-stream.hub';
import { MongoClusterChangeSource } from './mongo-cluster-change.source';
import { tenantDatabases } from './tenant-databases';
import type { TenantDatabasePorts, TenantPorts, TenantWatch } from './tenant.ports';

export interface MongoTenantPortsDeps {
  /** The app connection's client (every tenant database is one of its databases). */
  client: mongo.MongoClient;
  /** The app's database: the relay state (lease, checkpoints) of every tenant. */
  appDb: mongo.Db;
  collections: Required<OutboxCollections>;
  tenants: Pick<ResolvedTenantsOptions, 'databases' | 'stream'>;
  relay: ResolvedRelayOptions;
  clock: RelayClock;
  random: () => number;
  logger: RelayLogger;
  /** Run once per database before it is first followed (the indexes, when `createIndexes`). */
  prepare?: (outbox: MongoOutboxRelayStore) => Promise<void>;
}

/**
 * The tenant databases on the app connection's client: each database's outbox and dead letters
 * in that database, every checkpoint in the app's database, and the stream as configured: one
 * cluster-wide stream shared by all (`ClusterStreamHub`), or one per database.
 */
export class MongoTenantPorts implements TenantPorts {
  private readonly stores = new Map<string, MongoOutboxRelayStore>();
  private readonly prepared = new Set<string>();
  private readonly hub?: ClusterStreamHub;
  /** With the cluster-wide stream, its hub: databases without work rest. */
  readonly watch?: TenantWatch;
  private readonly clusterState: ClusterCheckpointState;

  constructor(private readonly deps: MongoTenantPortsDeps) {
    const { relay } = deps;
    const state = new MongoRelayStateStore(deps.appDb, deps.collections.relayState, relay.name);
    this.clusterState = new ClusterCheckpointState(state);
    if (deps.tenants.stream === 'cluster') {
      this.hub = new ClusterStreamHub(relay, {
        source: (databases) =>
          new MongoClusterChangeSource(deps.client, deps.collections.outbox, databases, relay),
        clock: deps.clock,
        random: deps.random,
        logger: deps.logger,
      });
      this.watch = this.hub;
    }
  }

  async databases(): Promise<readonly string[]> {
    const names = await tenantDatabases(this.deps.tenants.databases, async () => {
      const listed = await this.deps.client.db('admin').admin().listDatabases({ nameOnly: true });
      return listed.databases.map((database) => database.name);
    });
    for (const name of names) {
      if (this.prepared.has(name) || !this.deps.prepare) continue;
      await this.deps.prepare(this.stores.get(name) ?? this.newStore(name));
      this.prepared.add(name);
    }
    return names;
  }

  async hasPending(database: string): Promise<boolean> {
    // Not through `store()`: a resting database keeps no objects of its own, only its name.
    const outbox = relayCollection(this.deps.client.db(database), this.deps.collections.outbox);
    return (await outbox.countDocuments({ status: 'pending' }, { limit: 1 })) > 0;
  }

  forDatabase(database: string): TenantDatabasePorts {
    const outbox = this.store(database);
    const { relay, collections, appDb } = this.deps;
    if (this.hub) {
      return { outbox, state: this.clusterState, changes: this.hub.source(database) };
    }
    const ids = relayStateIds(relay.name);
    const state = new MongoRelayStateStore(appDb, collections.relayState, {
      lease: ids.lease,
      checkpoint: `${ids.checkpoint}@${database}`,
    });
    return { outbox, state, changes: new MongoChangeSource(outbox.outbox, relay) };
  }

  /** The store of a database that has (or had) a term: kept, its terms share it. */
  private store(database: string): MongoOutboxRelayStore {
    let store = this.stores.get(database);
    if (!store) {
      store = this.newStore(database);
      this.stores.set(database, store);
    }
    return store;
  }

  private newStore(database: string): MongoOutboxRelayStore {
    return new MongoOutboxRelayStore(this.deps.client.db(database), this.deps.collections);
  }
}
