import { InMemoryRelayStateStore } from '../testing/relay/in-memory-relay-state.store';
import { InMemoryRelayStore } from '../testing/relay/in-memory-relay.store';
import { ScriptedChangeSource } from '../testing/relay/scripted-change.source';
import { ScriptedPublisher } from '../testing/relay/scripted.publisher';
import { systemClock } from './ports/relay-clock';
import type { RelayLogger } from './ports/relay-logger';
import { OutboxRelayMetrics } from './relay.metrics';
import { RelayNode } from './relay.node';
import { resolveRelayOptions } from './relay.options';
import type { RelayOptions } from './relay.options';

const until = async (condition: () => boolean, timeoutMs = 3000): Promise<void> => {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

function setup(options: Partial<RelayOptions>) {
  const outbox = new InMemoryRelayStore();
  const state = new InMemoryRelayStateStore();
  const changes = new ScriptedChangeSource();
  const publisher = new ScriptedPublisher();
  const warnings: string[] = [];
  const logger: RelayLogger = {
    log: () => undefined,
    warn: (message) => warnings.push(message),
    error: (message) => warnings.push(message),
    debug: () => undefined,
  };
  const metrics = new OutboxRelayMetrics();
  const node = new RelayNode(resolveRelayOptions({ publisher, ...options }), {
    owner: 'relay-a',
    outbox,
    state,
    changes,
    publisher,
    clock: systemClock,
    loggers: () => logger,
    metrics,
    random: () => 0.5,
  });
  const commit = (aggregateId: string) => changes.push(outbox.insert({ aggregateId }));
  return { outbox, state, changes, publisher, metrics, warnings, node, commit };
}

describe('RelayNode.stop (a graceful stop costs nothing)', () => {
  it('marks the events the broker acknowledges while it stops, saves the checkpoint, then releases the lease', async () => {
    // Defect: the term refused every write once it began to end, so the published marks of the
    // batches acknowledged during the stop were dropped although the lease was still valid, and
    // the next leader published those events a second time.
    const t = setup({ batchSize: 2, shutdownTimeoutMs: 2_000 });
    t.publisher.delayMs = 150;
    await t.node.start();
    for (let i = 0; i < 6; i++) t.commit(`a${i}`);
    await until(() => t.publisher.calls.length > 0);
    await t.node.stop();

    expect(t.warnings).toEqual([]);
    const acknowledged = new Set(t.publisher.accepted.map((event) => event.eventId));
    expect(acknowledged.size).toBeGreaterThan(0);
    const unmarked = t.outbox.pending().filter((doc) => acknowledged.has(doc.eventId));
    expect(unmarked.map((doc) => doc.eventId)).toEqual([]);
    expect(t.state.checkpoint.fencing).toBe(1);
    expect(t.state.lease?.expiresAt.getTime()).toBe(0); // released
  });

  it('keeps renewing its lease while it settles, so an acknowledgement slower than the lease is still marked', async () => {
    // Defect: stop() stopped renewing the lease first; a publish acknowledged after the lease's
    // local validity ran out (shutdownTimeoutMs longer than the lease) could not be marked and
    // was published again by the next leader.
    const t = setup({
      batchSize: 2,
      shutdownTimeoutMs: 2_000,
      lease: { durationMs: 300, renewMs: 100 },
    });
    t.publisher.delayMs = 600;
    await t.node.start();
    t.commit('a0');
    await until(() => t.publisher.calls.length > 0);
    await t.node.stop();
    expect(t.warnings).toEqual([]);
    expect(t.publisher.accepted).toHaveLength(1);
    expect(t.outbox.pending()).toEqual([]);
    expect(t.state.lease?.expiresAt.getTime()).toBe(0); // released after
  });

  it('refuses the writes of a stopping term once its lease ran out (fencing stays)', async () => {
    const t = setup({
      batchSize: 2,
      shutdownTimeoutMs: 2_000,
      lease: { durationMs: 300, renewMs: 100 },
    });
    t.publisher.delayMs = 600;
    await t.node.start();
    t.commit('a0');
    await until(() => t.publisher.calls.length > 0);
    const stopping = t.node.stop();
    t.state.failNext = 1_000; // the lease cannot be renewed nor released: it runs out
    await stopping;
    expect(t.publisher.accepted).toHaveLength(1);
    expect(t.outbox.writes.filter((write) => write.method === 'markPublished')).toEqual([]);
  });

  it('returns within shutdownTimeoutMs while the change stream waits for a reopen with a long backoff', async () => {
    // Defect: the follower's backoff sleep could not be interrupted, and stop() waited for it
    // (up to backoff.maxMs, 60 s by default).
    const t = setup({
      shutdownTimeoutMs: 200,
      backoff: { initialMs: 30_000, maxMs: 60_000, jitter: 0 },
    });
    t.changes.failNext = ['transient'];
    await t.node.start();
    await until(() => t.changes.opened.length === 1 && t.node.status().stream === 'retrying');
    const started = Date.now();
    await t.node.stop();
    expect(Date.now() - started).toBeLessThan(200 + 300);
  });
});

describe('RelayNode metrics', () => {
  it('measures the checkpoint age on the server clock the checkpoint time is written on', async () => {
    // Defect: the age subtracted a server time from this process's clock (wrong by the skew).
    const t = setup({ checkpointEvery: { events: 1, ms: 10 } });
    const skewMs = 3_600_000;
    t.state.serverNow = () => Date.now() + skewMs;
    await t.node.start();
    try {
      t.commit('a0');
      await until(() => t.metrics.lastCheckpointAt !== undefined);
      const age = t.metrics.snapshot().checkpointAgeMs as number;
      expect(age).toBeGreaterThanOrEqual(0);
      expect(age).toBeLessThan(5_000);
    } finally {
      await t.node.stop();
    }
  });
});
