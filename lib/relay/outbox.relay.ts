import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { OutboxConnectionHost } from '../common/outbox-connection.host';
import {
  OUTBOX_PUBLISHER,
  OUTBOX_RELAY_OPTIONS,
  OUTBOX_STORAGE_OPTIONS,
} from '../common/outbox.constants';
import type { OutboxStorageOptions } from '../common/outbox-storage.options';
import type { OutboxPublisher } from '../publisher/outbox-publisher.interface';
import type { mongo } from 'mongoose';
import { OUTBOX_TENANTS_OPTIONS, type TenantsSetting } from '../tenants/tenants.resolved';
import { deploymentKindOf, deploymentWarning } from './mongo/deployment-kind';
import { MongoChangeSource } from './mongo/mongo-change.source';
import { MongoOutboxRelayStore } from './mongo/mongo-outbox-relay.store';
import { MongoRelayPartitions } from './mongo/mongo-relay-partitions';
import { MongoRelayStateStore } from './mongo/mongo-relay-state.store';
import { ensureRelayIndexes } from './mongo/relay-indexes';
import { nestRelayLoggers } from './ports/relay-logger';
import { PartitionedRelayNode } from './partitions/partitioned-relay.node';
import type { PartitionedRelayNodeDeps } from './partitions/partitioned-relay.node';
import { RelayScheduling } from './relay.scheduling';
import { OutboxRelayMetrics } from './relay.metrics';
import type { ResolvedRelayOptions } from './relay.options';
import type { RelayStatus } from './relay.status';
import { tenantsTerms } from './tenants/tenants.wiring';

/** What `OutboxRelay` wires for its node besides the publisher and the metrics (the MongoDB adapters). */
export type OutboxRelayPorts = Omit<PartitionedRelayNodeDeps, 'publisher' | 'metrics'>;

/**
 * The relay's Nest lifecycle: started in `onApplicationBootstrap` (unless `autoStart: false`),
 * stopped in `beforeApplicationShutdown` (before Mongoose closes its connection). The work is
 * done by a `PartitionedRelayNode` wired to the app's MongoDB connection and the publisher:
 * - `RelayLease`: one active relay among instances (a lease on the server's clock, fencing);
 * - `RelayPartitions` (`relay.partitions` > 1): the outbox split into partitions, each with its
 *   own lease, fencing number and checkpoint, shared fairly among the live instances;
 * - `RelayStream`: follows the outbox's change stream; `RelayDrain`, `RelaySweep`: the
 *   collection as the source of truth; `RelayEngine`: per-aggregate order, retries, dead
 *   letters; `RelayDestinations`: topics or partitions held back; `RelayCheckpoint`.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private deploymentChecked = false;
  private readonly relayOptions: ResolvedRelayOptions | undefined;
  private readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private node?: PartitionedRelayNode;
  private indexesReady = false;

  constructor(
    @Inject(OUTBOX_STORAGE_OPTIONS) private readonly options: OutboxStorageOptions,
    @Inject(OUTBOX_RELAY_OPTIONS) relay: ResolvedRelayOptions | false,
    private readonly connectionHost: OutboxConnectionHost,
    readonly metrics: OutboxRelayMetrics,
    private readonly scheduling: RelayScheduling,
    @Optional() @Inject(OUTBOX_PUBLISHER) private readonly publisher: OutboxPublisher | null,
    @Optional() @Inject(OUTBOX_TENANTS_OPTIONS) private readonly tenants?: TenantsSetting | null,
  ) {
    this.relayOptions = relay === false ? undefined : relay;
  }

  /** Whether this instance currently holds the lease and publishes. */
  get isLeader(): boolean {
    return this.node?.isLeader ?? false;
  }

  get isRunning(): boolean {
    return this.node?.isRunning ?? false;
  }

  /** Leader or standby, what the stream does, held destinations, memory in use. */
  status(): RelayStatus {
    return (
      this.node?.status() ?? {
        running: false,
        role: 'stopped',
        stream: 'stopped',
        heldDestinations: [],
        inFlight: { events: 0, bytes: 0 },
        trackedAggregates: 0,
      }
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.relayOptions?.autoStart) await this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  /** Starts the relay (idempotent). Resolves once it tried to become leader; work goes on in the background. */
  async start(): Promise<void> {
    const relay = this.relayOptions;
    if (this.node?.isRunning) return;
    if (!relay || !this.publisher) {
      this.logger.warn('The relay is disabled (relay: false); start() does nothing.');
      return;
    }
    const ports = await this.wirePorts(relay);
    // Always the partitioned node: with `partitions: 1` and the single-lease layout it is exactly
    // a RelayNode, and it also follows a switch of the stored layout (to and from 1).
    this.node = new PartitionedRelayNode(relay, {
      ...ports,
      publisher: this.publisher,
      metrics: this.metrics,
    });
    await this.node.start();
  }

  /**
   * The node's ports: the MongoDB adapters on the app's connection (indexes ensured first when
   * `createIndexes`), this process's owner id, the relay's clock and Nest loggers. The relay
   * simulation overrides it with its simulated ports, so it runs this class as production does.
   */
  protected async wirePorts(relay: ResolvedRelayOptions): Promise<OutboxRelayPorts> {
    const db = this.connectionHost.connection.db;
    if (!db) {
      throw new Error(
        'The Mongoose connection is not open yet; start the relay after it connected.',
      );
    }
    const { collections } = this.options;
    await this.warnOfDeployment(db);
    const outbox = new MongoOutboxRelayStore(db, collections);
    const indexes = (store: MongoOutboxRelayStore) =>
      ensureRelayIndexes(
        store.outbox,
        store.deadLetters,
        relay.retentionSeconds,
        this.logger,
        relay.partitions,
      );
    if (this.options.createIndexes && !this.indexesReady) {
      await indexes(outbox);
      this.indexesReady = true;
    }
    const tenants = this.tenants
      ? tenantsTerms(relay, this.tenants, {
          db,
          collections,
          clock: this.scheduling.clock(),
          prepare: this.options.createIndexes ? indexes : undefined,
        })
      : {};
    return {
      ...tenants,
      owner: this.owner,
      outbox,
      state: new MongoRelayStateStore(db, collections.relayState, relay.name),
      changes: new MongoChangeSource(outbox.outbox, relay),
      clock: this.scheduling.clock(),
      loggers: nestRelayLoggers,
      partitions: new MongoRelayPartitions(db, {
        collections,
        relayName: relay.name,
        batchSize: relay.batchSize,
        idleMs: relay.idleMs,
      }),
    };
  }

  /** Through mongos the cancel race protection rests on the shards' clocks: say so once. */
  private async warnOfDeployment(db: mongo.Db): Promise<void> {
    if (this.deploymentChecked) return;
    this.deploymentChecked = true;
    const hello = await db.command({ hello: 1 }).catch(() => undefined);
    const warning = hello && deploymentWarning(deploymentKindOf(hello));
    if (warning) this.logger.warn(warning);
  }

  /**
   * Stops taking new work, lets in-flight publishes finish (up to `shutdownTimeoutMs`, then
   * abandons them: they stay pending), saves the checkpoint, releases the lease and disconnects
   * the publisher. Never throws.
   */
  async stop(): Promise<void> {
    await this.node?.stop();
  }
}
