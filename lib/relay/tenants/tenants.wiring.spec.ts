import { InMemoryRelayStateStore } from '../../testing/relay/in-memory-relay-state.store';
import { InMemoryRelayStore } from '../../testing/relay/in-memory-relay.store';
import { ScriptedChangeSource } from '../../testing/relay/scripted-change.source';
import { ScriptedPublisher } from '../../testing/relay/scripted.publisher';
import { PartitionRelay } from '../partitions/partition.relay';
import { SharedInFlight } from '../partitions/shared-in-flight';
import { systemClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import type { RelayLayout } from '../ports/relay-partitions.store';
import { OutboxRelayMetrics } from '../relay.metrics';
import { resolveRelayOptions } from '../relay.options';
import type { TenantPorts } from './tenant.ports';
import { tenantTermsOver } from './tenants.wiring';

const silent: RelayLogger = { log() {}, warn() {}, error() {}, debug() {} };

const until = async (condition: () => boolean, timeoutMs = 5000): Promise<void> => {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

/** Tenant ports over one in-memory outbox per database, each with its own stream. */
function memoryTenants(name: string, databases: string[]) {
  const stores = new Map(databases.map((database) => [database, new InMemoryRelayStore()]));
  const asked: Array<{ ports: string; layout: RelayLayout; partition: number }> = [];
  const scoped = new Map<number, ReturnType<typeof memoryTenants>>();
  const ports: TenantPorts = {
    databases: () => Promise.resolve(databases),
    forDatabase: (database) => {
      const changes = new ScriptedChangeSource();
      changes.idleMs = 20;
      return {
        outbox: stores.get(database) as InMemoryRelayStore,
        state: new InMemoryRelayStateStore(),
        changes,
      };
    },
    forPartition: (layout, partition) => {
      asked.push({ ports: name, layout, partition });
      return within(partition).ports;
    },
  };
  const within = (partition: number) => {
    if (!scoped.has(partition))
      scoped.set(partition, memoryTenants(`${name}/p${partition}`, databases));
    return scoped.get(partition) as ReturnType<typeof memoryTenants>;
  };
  return { ports, stores, asked, within };
}

/**
 * Partition `partition` of `layout`, its terms made by `tenantTermsOver(tenants.ports)`: its own
 * scope (lease, checkpoint) is the app database's, nothing per tenant.
 */
function partitionOverTenants(
  tenants: ReturnType<typeof memoryTenants>,
  publisher: ScriptedPublisher,
  options: ReturnType<typeof resolveRelayOptions>,
  layout: RelayLayout,
  partition: number,
) {
  const metrics = new OutboxRelayMetrics();
  const scope = {
    outbox: new InMemoryRelayStore(),
    changes: new ScriptedChangeSource(),
    state: new InMemoryRelayStateStore(),
  };
  const base = {
    owner: 'a',
    ...scope,
    publisher,
    clock: systemClock,
    loggers: () => silent,
    metrics,
    ...tenantTermsOver(tenants.ports),
  };
  const relay = new PartitionRelay(layout, partition, scope, {
    options,
    base,
    budget: new SharedInFlight(options.maxInFlight, options.maxInFlightBytes),
    metrics,
  });
  return { relay, scope };
}

describe('tenantTermsOver', () => {
  it("makes a partition's term a TenantsTerm over the tenant ports narrowed to that partition", async () => {
    const publisher = new ScriptedPublisher();
    const options = resolveRelayOptions({
      publisher,
      partitions: 3,
      batchSize: 10,
      lease: { durationMs: 5_000, renewMs: 100 },
      idleMs: 20,
      sweepIntervalMs: 100,
    });
    const tenants = memoryTenants('all', ['t1', 't2']);
    const layout = { partitions: 3, generation: 4 };
    const { relay, scope } = partitionOverTenants(tenants, publisher, options, layout, 1);
    // Only the narrowed ports' outboxes are read: the unscoped ones' events stay pending.
    tenants.stores.get('t1')?.insert({ aggregateId: 'not-this-partition' });
    tenants.within(1).stores.get('t2')?.insert({ aggregateId: 'this-partition' });
    await relay.start();
    try {
      await until(() => relay.isLeader);
      expect(tenants.asked).toEqual([{ ports: 'all', layout, partition: 1 }]);
      expect(scope.state.lease?.owner).toBe('a'); // the partition's lease, as without tenants
      await until(() => publisher.accepted.length === 1);
      expect(publisher.accepted[0].aggregateId).toBe('this-partition');
      const tenantsSeen = relay.node.status().tenants?.map((one) => one.database);
      expect(tenantsSeen).toEqual(['t1', 't2']);
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(publisher.accepted).toHaveLength(1);
    } finally {
      await relay.stop();
    }
  });

  it("bounds a partition's tenant databases to its equal part of maxInFlight", async () => {
    const publisher = new ScriptedPublisher();
    publisher.delayMs = 400; // publishes linger: what was read stays held
    const options = resolveRelayOptions({
      publisher,
      partitions: 3,
      batchSize: 5,
      maxInFlight: 30,
      lease: { durationMs: 5_000, renewMs: 100 },
      idleMs: 20,
      sweepIntervalMs: 100,
    });
    const tenants = memoryTenants('all', ['t1']);
    for (let n = 0; n < 40; n++)
      tenants
        .within(0)
        .stores.get('t1')
        ?.insert({ aggregateId: `a${n}` });
    const layout = { partitions: 3, generation: 1 };
    const { relay } = partitionOverTenants(tenants, publisher, options, layout, 0);
    await relay.start();
    try {
      await until(() => publisher.calls.length > 0);
      let most = 0;
      for (let sample = 0; sample < 30; sample++) {
        most = Math.max(most, relay.node.status().inFlight.events);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // 30 / 3 partitions: 10 (the whole 30 if each partition's term had all of it).
      expect(most).toBeGreaterThanOrEqual(5);
      expect(most).toBeLessThanOrEqual(10);
    } finally {
      await relay.stop();
    }
  });
});
