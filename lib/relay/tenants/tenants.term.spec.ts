import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { InMemoryRelayStateStore } from '../../testing/relay/in-memory-relay-state.store';
import { InMemoryRelayStore } from '../../testing/relay/in-memory-relay.store';
import { ScriptedChangeSource } from '../../testing/relay/scripted-change.source';
import { ScriptedPublisher } from '../../testing/relay/scripted.publisher';
import type { ChangeSource } from '../ports/change-source';
import { systemClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import { RelayNode } from '../relay.node';
import { OutboxRelayMetrics } from '../relay.metrics';
import { resolveRelayOptions } from '../relay.options';
import { ClusterCheckpointState } from './cluster-checkpoint.state';
import { ClusterStreamHub } from './cluster-stream.hub';
import type { TenantPorts } from './tenant.ports';
import { tenantTermsOver } from './tenants.wiring';

jest.setTimeout(20_000);

const quiet: RelayLogger = {
  log: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
};

/** The cluster-wide stream over every database's inserts, each change tagged with its database. */
function clusterOf(scripted: ScriptedChangeSource): (databases: readonly string[]) => ChangeSource {
  return (databases) => ({
    open: async (from) => {
      const cursor = await scripted.open(from);
      return {
        close: () => cursor.close(),
        next: async (max) => {
          const batch = await cursor.next(max);
          const changes = batch.changes
            .map((change) => ({ ...change, database: String(change.event.tenant) }))
            .filter((change) => databases.includes(change.database));
          return { ...batch, changes };
        },
      };
    },
  });
}

function setup(initial: string[], sweepGraceMs = 30_000, rest = false) {
  const options = resolveRelayOptions({
    sweepGraceMs,
    publisher: new ScriptedPublisher(),
    batchSize: 10,
    maxInFlight: 200,
    sweepIntervalMs: 100,
    idleMs: 20,
    lease: { enabled: true, durationMs: 3000, renewMs: 500 },
  });
  const publisher = new ScriptedPublisher();
  const listed = [...initial];
  const stores = new Map<string, InMemoryRelayStore>();
  const store = (database: string) => {
    if (!stores.has(database)) stores.set(database, new InMemoryRelayStore());
    return stores.get(database) as InMemoryRelayStore;
  };
  const cluster = new ScriptedChangeSource();
  const state = new InMemoryRelayStateStore();
  const hub = new ClusterStreamHub(options, {
    source: clusterOf(cluster),
    clock: systemClock,
    random: () => 0.5,
    logger: quiet,
  });
  const ports: TenantPorts = {
    databases: () => Promise.resolve([...listed]),
    forDatabase: (database) => ({
      outbox: store(database),
      state: new ClusterCheckpointState(state),
      changes: hub.source(database),
    }),
    ...(rest ? { watch: hub } : {}),
    forPartition: () => {
      throw new Error('these specs run one partition');
    },
  };
  const node = new RelayNode(options, {
    owner: 'relay-a',
    outbox: store('app'),
    state,
    changes: cluster,
    publisher,
    clock: systemClock,
    loggers: () => quiet,
    metrics: new OutboxRelayMetrics(),
    random: () => 0.5,
    ...tenantTermsOver(ports),
  });
  /** Commits an event of `aggregateId` in `database` (tenant = database). */
  const commit = (database: string, aggregateId: string, n: number): OutboxEventRecord => {
    const event = store(database).insert({ aggregateId, payload: { n } }, { tenant: database });
    cluster.push(event);
    return event;
  };
  const publishedOf = (database: string, aggregateId: string) =>
    publisher.accepted
      .filter((event) => event.tenant === database && event.aggregateId === aggregateId)
      .map((event) => (event.payload as { n: number }).n);
  return { node, listed, store, commit, publishedOf, publisher, cluster, hub };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('TenantsTerm over a cluster-wide stream', () => {
  it('publishes backlog and new events of each database in per-(database, aggregate) order', async () => {
    const t = setup(['t1', 't2', 't3']);
    for (const db of ['t1', 't2', 't3']) for (let n = 0; n < 3; n++) t.commit(db, 'a', n);
    await t.node.start();
    try {
      for (const db of ['t1', 't2', 't3']) for (let n = 3; n < 6; n++) t.commit(db, 'a', n);
      await until(() => t.publisher.accepted.length >= 18, '18 events');
      for (const db of ['t1', 't2', 't3'])
        expect(t.publishedOf(db, 'a')).toEqual([0, 1, 2, 3, 4, 5]);
      expect(t.node.status().tenants?.map((one) => one.database)).toEqual(['t1', 't2', 't3']);
    } finally {
      await t.node.stop();
    }
  });

  it('follows a database listed while it runs (draining its backlog) and lets go of one unlisted', async () => {
    const t = setup(['t1']);
    await t.node.start();
    try {
      for (let n = 0; n < 4; n++) t.commit('t2', 'a', n);
      t.listed.splice(0, 1, 't2');
      await until(() => t.publishedOf('t2', 'a').length === 4, 't2 drained');
      await until(
        () => t.node.status().tenants?.find((one) => one.database === 't1')?.pendingCount === 0,
        't1 let go and reported',
      );
      expect(t.node.status().tenants?.find((one) => one.database === 't1')?.state).toBe('released');
      t.commit('t1', 'a', 0);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(t.publishedOf('t1', 'a')).toEqual([]);
      expect((await t.store('t1').pendingStats()).count).toBe(1);
    } finally {
      await t.node.stop();
    }
  });

  it('a database listed again while its term still ends is followed only once that term ended', async () => {
    const t = setup(['t1']);
    t.publisher.delayMs = 1_000; // each publish call takes a second
    for (let n = 0; n < 3; n++) t.commit('t1', 'a', n);
    await t.node.start();
    try {
      await until(() => t.publisher.calls.length > 0, 'a publish under way');
      t.listed.splice(0, 1); // let go: its term ends, waiting for the call in flight
      await new Promise((resolve) => setTimeout(resolve, 150)); // a re-read (every 100 ms)
      t.listed.push('t1'); // listed again before that term ended
      await until(() => t.publishedOf('t1', 'a').length >= 3, 't1 published');
      // Two terms on one database would publish its aggregate in two calls at once.
      expect(t.publisher.maxConcurrentPerAggregate).toBe(1);
      expect([...new Set(t.publishedOf('t1', 'a'))]).toEqual([0, 1, 2]);
    } finally {
      await t.node.stop();
    }
  });

  it('databases without work rest (no term): a change or a pending event wakes one, and a quiet term rests again', async () => {
    const t = setup(['t1', 't2', 't3'], 30_000, true);
    for (let n = 0; n < 3; n++) t.commit('t1', 'a', n);
    await t.node.start();
    try {
      await until(() => t.publishedOf('t1', 'a').length === 3, 't1 backlog published');
      expect(t.hub.following).not.toContain('t2');
      expect(t.hub.following).not.toContain('t3');
      await until(() => t.hub.following.length === 0, 't1 put to rest');
      const followed = t.node.status().tenants?.filter((one) => one.state === 'followed');
      expect(followed?.map((one) => one.database)).toEqual(['t1', 't2', 't3']);
      t.commit('t2', 'a', 0); // its change wakes t2
      await until(() => t.publishedOf('t2', 'a').length === 1, 't2 woken by its change');
      // Pending without a change the stream saw (written while nothing read it): found at a re-read.
      t.store('t3').insert({ aggregateId: 'a', payload: { n: 0 } }, { tenant: 't3' });
      await until(() => t.publishedOf('t3', 'a').length === 1, 't3 woken by its check');
      t.commit('t1', 'a', 3);
      await until(() => t.publishedOf('t1', 'a').length === 4, 't1 woken again');
      expect(t.publishedOf('t1', 'a')).toEqual([0, 1, 2, 3]);
    } finally {
      await t.node.stop();
    }
  });
});
