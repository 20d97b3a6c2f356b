import type { mongo } from 'mongoose';
import type { OutboxCollections } from '../../common/outbox-storage.options';
import type { OutboxDoc } from '../../documents/outbox-event.document';
import { partitionedRelayIds, relayStateIds } from '../../documents/relay-state.document';
import type { ResolvedTenantsOptions } from '../../tenants/tenants.resolved';
import { MongoChangeSource } from '../mongo/mongo-change.source';
import { MongoOutboxRelayStore } from '../mongo/mongo-outbox-relay.store';
import { MongoRelayStateStore } from '../mongo/mongo-relay-state.store';
import { relayCollection } from '../mongo/relay-collections';
import { slotsIn } from '../mongo/slot-range.filters';
import type { SlotRange } from '../ports/partition-layout';
import type { RelayClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import type { RelayLayout } from '../ports/relay-partitions.store';
import type { ResolvedRelayOptions } from '../relay.options';
import { ClusterCheckpointState } from './cluster-checkpoint.state';
import { ClusterStreamHub } from './cluster-stream.hub';
import { MongoClusterChangeSource } from './mongo-cluster-change.source';
import { PartitionPorts } from './partition-ports';
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
 * What the ports cover: every slot (the single lease) or one partition's `range`, and the `_id`s
 * of that lease and its checkpoint in the app's relay state (`relayStateIds`,
 * `partitionedRelayIds(...).partition`): each database's checkpoint is `<checkpoint>@<database>`.
 */
interface TenantScope {
  range?: SlotRange;
  ids: { lease: string; checkpoint: string };
}

/**
 * The tenant databases on the app connection's client: each database's outbox and dead letters
 * in that database, every checkpoint in the app's database, and the stream as configured: one
 * cluster-wide stream shared by all (`ClusterStreamHub`), or one per database.
 *
 * `forPartition` gives the same ports narrowed to one partition's slots, kept per partition of
 * the current layout: every store slot-filtered (`MongoOutboxRelayStore(db, collections, range)`,
 * which stamps missing slots before its range reads, as the single database's partitions do),
 * every stream filtered on the range by the server, and a `ClusterStreamHub` of its own (one
 * cluster-wide stream per held partition: a partition's terms come and go with its lease).
 *
 * Events without `slot`: every version that writes tenant events stamps it (slots came before
 * the `tenants` option), so only a foreign writer leaves one out. They are handled anyway, as a
 * single database's partitions do, except for the periodic backfill: the range store stamps a
 * database's missing slots before its drains and retry loads, the streams keep an unslotted
 * insert in its aggregate's partition (`inSlotRange`), and `hasPending` counts unslotted events,
 * so a resting database with one is woken (and drained, which stamps it) in every partition.
 */
export class MongoTenantPorts implements TenantPorts {
  private readonly stores = new Map<string, MongoOutboxRelayStore>();
  private readonly hub?: ClusterStreamHub;
  /** With the cluster-wide stream, its hub: databases without work rest. */
  readonly watch?: TenantWatch;
  private readonly clusterState: ClusterCheckpointState;
  /** The ports of each partition of the current layout. */
  private readonly partitions = new PartitionPorts(
    (range, layout, partition) =>
      new MongoTenantPorts(
        this.deps,
        {
          range,
          ids: partitionedRelayIds(this.deps.relay.name).partition(layout.generation, partition),
        },
        this.listing,
      ),
  );
  private readonly listing: () => Promise<readonly string[]>;

  constructor(
    private readonly deps: MongoTenantPortsDeps,
    private readonly scope: TenantScope = { ids: relayStateIds(deps.relay.name) },
    listing?: () => Promise<readonly string[]>,
  ) {
    const { relay } = deps;
    const state = new MongoRelayStateStore(deps.appDb, deps.collections.relayState, scope.ids);
    this.clusterState = new ClusterCheckpointState(state);
    this.listing = listing ?? preparedListing(deps);
    if (deps.tenants.stream === 'cluster') {
      this.hub = new ClusterStreamHub(relay, {
        source: (databases) =>
          new MongoClusterChangeSource(
            deps.client,
            deps.collections.outbox,
            databases,
            relay,
            scope.range,
          ),
        clock: deps.clock,
        random: deps.random,
        logger: deps.logger,
      });
      this.watch = this.hub;
    }
  }

  databases(): Promise<readonly string[]> {
    return this.listing();
  }

  forPartition(layout: RelayLayout, partition: number): TenantPorts {
    return layout.partitions === 1 ? this : this.partitions.of(layout, partition);
  }

  async hasPending(database: string): Promise<boolean> {
    // Not through `store()`: a resting database keeps no objects of its own, only its name.
    const outbox = relayCollection<OutboxDoc>(
      this.deps.client.db(database),
      this.deps.collections.outbox,
    );
    return (await outbox.countDocuments(this.pending(), { limit: 1 })) > 0;
  }

  /**
   * The pending events of the scope; in a partition, those without a slot too (written by a
   * version before slots): its term, woken by one, stamps them all before reading its range.
   */
  private pending(): mongo.Filter<OutboxDoc> {
    const range = this.scope.range;
    if (!range) return { status: 'pending' };
    return {
      status: 'pending',
      $or: [slotsIn(range), { slot: null }],
    } as mongo.Filter<OutboxDoc>;
  }

  forDatabase(database: string): TenantDatabasePorts {
    const outbox = this.store(database);
    const { relay, collections, appDb } = this.deps;
    if (this.hub) {
      return { outbox, state: this.clusterState, changes: this.hub.source(database) };
    }
    const { ids, range } = this.scope;
    const state = new MongoRelayStateStore(appDb, collections.relayState, {
      lease: ids.lease,
      checkpoint: `${ids.checkpoint}@${database}`,
    });
    return { outbox, state, changes: new MongoChangeSource(outbox.outbox, relay, range) };
  }

  /** The store of a database that has (or had) a term: kept, its terms share it. */
  private store(database: string): MongoOutboxRelayStore {
    let store = this.stores.get(database);
    if (!store) {
      const { client, collections } = this.deps;
      store = new MongoOutboxRelayStore(client.db(database), collections, this.scope.range);
      this.stores.set(database, store);
    }
    return store;
  }
}

/**
 * The tenant databases listed now, each prepared once before it is first returned. Every
 * partition's term lists at its own sweep (the contract: the answer is the option's at that
 * call), so a relay holding P partitions asks P times per `sweepIntervalMs`: with a pattern,
 * P `listDatabases({ nameOnly: true })`, cheap next to the reads of a sweep.
 */
function preparedListing(deps: MongoTenantPortsDeps): () => Promise<readonly string[]> {
  const prepared = new Set<string>();
  return async () => {
    const names = await tenantDatabases(deps.tenants.databases, async () => {
      const listed = await deps.client.db('admin').admin().listDatabases({ nameOnly: true });
      return listed.databases.map((database) => database.name);
    });
    for (const name of names) {
      if (prepared.has(name) || !deps.prepare) continue;
      await deps.prepare(new MongoOutboxRelayStore(deps.client.db(name), deps.collections));
      prepared.add(name);
    }
    return names;
  };
}
