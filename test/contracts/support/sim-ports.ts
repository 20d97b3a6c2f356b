import type { OutboxDeadLetter } from '../../../lib/documents/dead-letter.document';
import type { OutboxDoc } from '../../../lib/documents/outbox-event.document';
import { simKafkaRig } from '../../simulation/kafka/sim-kafka.rig';
import { SimChangeSource } from '../../simulation/mongo/sim-change.source';
import { copyDoc } from '../../simulation/mongo/sim-database';
import { SimOutboxStore } from '../../simulation/mongo/sim-outbox.store';
import { SimPartitionPorts } from '../../simulation/mongo/sim-partitions.store';
import { SimStateStore } from '../../simulation/mongo/sim-state.store';
import { SimTenantPorts } from '../../simulation/mongo/sim-tenant.ports';
import type { SimScheduler } from '../../simulation/core/sim.scheduler';
import type { TenantPorts } from '../../../lib/relay/tenants/tenant.ports';
import type { ChangeSourceFixture } from '../change-source.contract';
import { CONTRACT_MESSAGE_MAX_BYTES } from '../kafka.sender.contract';
import type { KafkaSenderFixture } from '../kafka.sender.contract';
import type { OutboxStoreFixture } from '../outbox-relay.store.contract';
import type { PartitionsFixture } from '../relay-partitions.store.contract';
import type { StateStoreFixture } from '../relay-state.store.contract';
import { tenantContractRelay } from '../tenant-ports.contract';
import type { TenantPortsFixture } from '../tenant-ports.contract';
import { driven, settle } from './sim-driver';
import { SimMongoWorld } from './sim-mongo.world';

/** The simulated `OutboxRelayStore` (test/simulation/mongo/sim-outbox.store.ts). */
export function simOutboxStoreFixture(): OutboxStoreFixture {
  const world = new SimMongoWorld();
  return {
    store: (range) =>
      driven(
        world.scheduler,
        new SimOutboxStore(
          world.connection,
          world.db,
          world.history,
          range ? { range, leaseScope: 'contract-partition' } : undefined,
        ),
      ),
    insert: (events) => world.insert(events),
    stored: (event) => {
      const doc = world.db.inspect(event.eventId);
      return Promise.resolve(doc ? (copyDoc(doc) as unknown as OutboxDoc) : undefined);
    },
    deadLetters: (eventId) => {
      const letter = world.db.deadLetters.get(eventId);
      return Promise.resolve(letter ? [letter as unknown as OutboxDeadLetter] : []);
    },
  };
}

/** The simulated `RelayStateStore` (test/simulation/mongo/sim-state.store.ts), the single scope. */
export function simStateStoreFixture(): StateStoreFixture {
  const world = new SimMongoWorld();
  return {
    store: () => driven(world.scheduler, simSingleState(world)),
    token: (n) => ({ pos: n, index: 0, time: n }),
  };
}

function simSingleState(world: SimMongoWorld): SimStateStore {
  return new SimStateStore(world.connection, world.db, world.history, 'contract', () => undefined);
}

/** The simulated `RelayPartitionPorts` (test/simulation/mongo/sim-partitions.store.ts). */
export function simPartitionsFixture(): PartitionsFixture {
  const world = new SimMongoWorld();
  return {
    ports: () =>
      driven(
        world.scheduler,
        new SimPartitionPorts({
          connection: world.connection,
          db: world.db,
          history: world.history,
          streams: world.streams,
          faults: world.faults,
          random: world.random.fork('partitions'),
          node: 'contract',
          onCheckpoint: () => undefined,
          stream: { batchSize: 10, idleMs: 100 },
        }),
      ),
    single: () => driven(world.scheduler, simSingleState(world)),
    insert: (events) => world.insert(events),
    stored: (event) => {
      const doc = world.db.inspect(event.eventId);
      return Promise.resolve(doc ? (copyDoc(doc) as unknown as OutboxDoc) : undefined);
    },
  };
}

/** The simulated `ChangeSource` (test/simulation/mongo/sim-change.source.ts). */
export function simChangeSourceFixture(): ChangeSourceFixture {
  const world = new SimMongoWorld();
  const MAJORITY_LAG_MS = 50;
  return {
    source: (range) =>
      driven(
        world.scheduler,
        new SimChangeSource(
          world.connection,
          world.streams,
          world.history,
          world.faults,
          world.random.fork('changes'),
          { batchSize: 10, idleMs: 100, range },
        ),
      ),
    insert: (events) => world.insert(events),
    insertNotYetMajority: (events) => world.insert(events, { majorityLagMs: MAJORITY_LAG_MS }),
    reachMajority: () => world.runUntil(world.scheduler.now + MAJORITY_LAG_MS),
    lostPosition: async () => {
      // A position older than the oplog window: the oplog keeps 1 s, and 5 s pass.
      const position = world.db.endOfOplog();
      world.shrinkOplogWindow(1_000);
      await world.runUntil(world.scheduler.now + 5_000);
      return position;
    },
    endCursors: async () => {
      world.db.stepdown(1);
      await world.runUntil(world.db.electionEndsAt);
    },
  };
}

/** The simulated `KafkaSender` (test/simulation/kafka/sim-kafka.sender.ts) on a simulated cluster. */
export function simKafkaSenderFixture(options: { idempotent?: boolean } = {}): KafkaSenderFixture {
  const OUTAGE_AT = 1_000_000_000;
  const always = { at: 0, duration: 999_999_999 }; // 999_999_999 % 3 = 0: NOT_ENOUGH_REPLICAS
  const topics = ['contract.topic', 'contract.refusing', 'contract.unauthorized'];
  const { scheduler, history, sender } = simKafkaRig({
    topics,
    faults: [
      { kind: 'kafka-partition-retriable', ...always, target: 1, param: 0 },
      { kind: 'kafka-topic-unauthorized', ...always, target: 2, param: 0 },
      { kind: 'broker-outage', at: OUTAGE_AT, duration: 1_000, target: 0, param: 0 },
    ],
    seed: 20261201,
    messageMaxBytes: CONTRACT_MESSAGE_MAX_BYTES,
    processName: 'contract',
    idempotent: options.idempotent,
  });
  return {
    sender: driven(scheduler, sender),
    topic: topics[0],
    missingTopic: 'contract.missing',
    refusing: { topic: topics[1], partition: 0 },
    unauthorizedTopic: topics[2],
    stored: (topic) => {
      const stored: Record<number, string[]> = {};
      for (const append of history.appends.filter((entry) => entry.topic === topic)) {
        (stored[append.partition] ??= []).push(append.eventId);
      }
      return Promise.resolve(stored);
    },
    brokerDown: async () => {
      await scheduler.run({ until: OUTAGE_AT });
    },
    close: () => Promise.resolve(),
  };
}

/** The simulated `TenantPorts` (test/simulation/mongo/sim-tenant.ports.ts), one replica set. */
export function simTenantPortsFixture(): TenantPortsFixture {
  const world = new SimMongoWorld();
  const { scheduler } = world;
  let fixtures = 0;
  let databases = 0;
  return {
    ports: (databases) => {
      const random = world.random.fork(`tenants-${++fixtures}`);
      const ports = new SimTenantPorts({
        context: {
          connection: world.connection,
          db: world.db,
          history: world.history,
          streams: world.streams,
          faults: world.faults,
          random: random.fork('streams'),
          node: 'contract',
          onCheckpoint: () => undefined,
          stream: { batchSize: 10, idleMs: 100 },
        },
        appState: simSingleState(world),
        tenants: { databases, stream: 'cluster' },
        relay: tenantContractRelay(100),
        clock: world.process.clock(),
        random: () => random.next(),
        logger: world.process.loggers()('RelayTenants'),
      });
      return drivenTenantPorts(scheduler, ports);
    },
    names: (count) => Array.from({ length: count }, () => `tenant_${databases++}`),
    insert: (database, events) => world.insert(events, { database }),
    drop: (database) => {
      world.db.dropTenantDatabase(database);
      return world.runUntil(scheduler.now);
    },
    waitFor: async (done, ms) => {
      const until = scheduler.now + ms;
      while (!done() && scheduler.now < until) await world.runUntil(scheduler.now + 50);
    },
    close: () => Promise.resolve(),
  };
}

/**
 * `ports` as plain async code sees them (`driven`): also the ports of a partition, and each
 * database's stream and its cursors, which are plain objects `driven` leaves as they are.
 */
function drivenTenantPorts(scheduler: SimScheduler, ports: TenantPorts): TenantPorts {
  return {
    databases: () => settle(scheduler, ports.databases()),
    hasPending: (database) => settle(scheduler, ports.hasPending!(database)),
    forDatabase: (database, fencing) => {
      const { outbox, state, changes } = ports.forDatabase(database, fencing);
      return {
        outbox: driven(scheduler, outbox),
        state: driven(scheduler, state),
        changes: {
          open: (from) =>
            settle(scheduler, changes.open(from)).then((cursor) => driven(scheduler, cursor)),
        },
      };
    },
    watch: ports.watch && driven(scheduler, ports.watch),
    forPartition: (layout, partition) =>
      drivenTenantPorts(scheduler, ports.forPartition(layout, partition)),
  };
}
