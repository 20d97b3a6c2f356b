import { slotsOfPartition } from '../../../lib/relay/ports/partition-layout';
import type {
  PartitionLease,
  PartitionScope,
  RelayLayout,
  RelayMember,
  RelayMembershipStore,
  RelayPartitionPorts,
} from '../../../lib/relay/ports/relay-partitions.store';
import type { SimRandom } from '../core/sim.random';
import type { ActiveFaults } from '../schedule/active-faults';
import type { SimHistory } from '../world/sim.history';
import type { CheckpointListener } from './sim-state.store';
import { SimStateStore } from './sim-state.store';
import { SimChangeSource } from './sim-change.source';
import type { SimChangeStreams } from './sim-change-streams';
import { partitionScope, SINGLE_SCOPE } from './sim-database';
import type { SimDatabase } from './sim-database';
import type { SimMongoConnection } from './sim-mongo.connection';
import { SimOutboxStore, stampMissingSlotsOp } from './sim-outbox.store';

/** What one relay process needs to build its partitions' ports. */
export interface SimPartitionContext {
  connection: SimMongoConnection;
  db: SimDatabase;
  history: SimHistory;
  streams: SimChangeStreams;
  faults: ActiveFaults;
  random: SimRandom;
  node: string;
  onCheckpoint: CheckpointListener;
  stream: { batchSize: number; idleMs: number };
}

/**
 * `RelayPartitionPorts` over the simulated database: membership and layout documents in the
 * relay state, every partition's lease and checkpoint (fencing from the shared counter),
 * slot-filtered outbox reads and change streams, and the slot backfill.
 */
export class SimPartitionPorts implements RelayPartitionPorts {
  readonly membership: RelayMembershipStore;

  constructor(private readonly context: SimPartitionContext) {
    this.membership = new SimMembershipStore(context.connection, context.db, context.history);
  }

  /**
   * A layout of one partition is the single relay exactly (as `MongoRelayPartitions`): the
   * unfiltered outbox and stream, the single lease and checkpoint.
   */
  scope(layout: RelayLayout, partition: number): PartitionScope {
    const { connection, db, history, streams, faults, random, node, onCheckpoint, stream } =
      this.context;
    const single = layout.partitions === 1;
    const range = single ? undefined : slotsOfPartition(partition, layout.partitions);
    const leaseScope = single ? undefined : partitionScope(layout, partition);
    return {
      outbox: new SimOutboxStore(
        connection,
        db,
        history,
        range && leaseScope ? { range, leaseScope } : undefined,
      ),
      changes: new SimChangeSource(
        connection,
        streams,
        history,
        faults,
        random.fork(`changes:${leaseScope ?? 'single'}`),
        { ...stream, range },
      ),
      state: new SimStateStore(connection, db, history, node, onCheckpoint, leaseScope),
    };
  }

  stampMissingSlots(limit: number): Promise<number> {
    const { connection, db, history } = this.context;
    return stampMissingSlotsOp(connection, db, history, limit);
  }
}

class SimMembershipStore implements RelayMembershipStore {
  constructor(
    private readonly connection: SimMongoConnection,
    private readonly db: SimDatabase,
    private readonly history: SimHistory,
  ) {}

  heartbeat(member: RelayMember): Promise<void> {
    return this.connection.op({ name: 'heartbeat', write: true, leaseOp: true }, () => {
      this.db.members.set(member.owner, {
        ...member,
        holding: [...member.holding],
        expiresAt: new Date(member.expiresAt.getTime()),
      });
    });
  }

  liveMembers(serverNow: Date): Promise<RelayMember[]> {
    return this.connection.op({ name: 'liveMembers', write: false }, () =>
      [...this.db.members.values()]
        .filter((member) => member.expiresAt.getTime() > serverNow.getTime())
        .sort((a, b) => (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0))
        .map((member) => ({ ...member, holding: [...member.holding] })),
    );
  }

  leave(owner: string): Promise<void> {
    return this.connection.op({ name: 'leave', write: true, leaseOp: true }, () => {
      this.db.members.delete(owner);
    });
  }

  layout(): Promise<RelayLayout | undefined> {
    return this.connection.op({ name: 'layout', write: false }, () =>
      this.db.layout ? { ...this.db.layout } : undefined,
    );
  }

  leases(layout: RelayLayout | undefined): Promise<PartitionLease[]> {
    return this.connection.op({ name: 'leases', write: false }, () => {
      const result: PartitionLease[] = [];
      for (let partition = 0; partition < (layout?.partitions ?? 1); partition++) {
        const scope =
          !layout || layout.partitions === 1 ? SINGLE_SCOPE : partitionScope(layout, partition);
        const lease = this.db.scopeState(scope).lease;
        if (lease)
          result.push({ ...lease, expiresAt: new Date(lease.expiresAt.getTime()), partition });
      }
      return result;
    });
  }

  switchLayout(
    expected: RelayLayout | undefined,
    partitions: number,
  ): Promise<RelayLayout | undefined> {
    return this.connection.op({ name: 'switchLayout', write: true, leaseOp: true }, () => {
      const switched = this.db.switchLayout(expected, partitions);
      if (switched) {
        this.history.layoutSwitches.push({
          at: this.db.now,
          owner: this.connection.owner,
          ...switched,
        });
        this.history.note(
          `layout switched to ${switched.partitions} partition(s) (generation ${switched.generation}) by ${this.connection.owner}`,
        );
      }
      return switched;
    });
  }
}
