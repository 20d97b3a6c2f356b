import { Logger } from '@nestjs/common';
import { InMemoryRelayStore } from '../../test/relay/support/in-memory-relay.store';
import { ScriptedPublisher } from '../../test/relay/support/scripted.publisher';
import { RelayEngine } from './relay.engine';
import type { RelayEngineOptions } from './relay.engine';
import { OutboxRelayMetrics } from './relay.metrics';

const until = async (condition: () => boolean, timeoutMs = 3000): Promise<void> => {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

function setup(overrides: Partial<RelayEngineOptions> = {}) {
  const store = new InMemoryRelayStore();
  const publisher = new ScriptedPublisher();
  const metrics = new OutboxRelayMetrics();
  const engine = new RelayEngine(
    store,
    publisher,
    {
      batchSize: 10,
      maxInFlight: 100,
      maxAttempts: 3,
      backoff: { initialMs: 20, maxMs: 40, jitter: 0 },
      publishConcurrency: 2,
      random: () => 0.5,
      ...overrides,
    },
    metrics,
  );
  return { store, publisher, metrics, engine };
}

describe('RelayEngine', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn']));

  it('publishes each aggregate in order, marks events published and settles them', async () => {
    const { store, publisher, engine } = setup();
    const docs = Array.from({ length: 30 }, (_, i) => store.insert({ aggregateId: `a${i % 3}` }));
    let settled = 0;
    for (const doc of docs) engine.offer(doc, () => settled++);
    await until(() => settled === 30);
    expect(store.pending()).toHaveLength(0);
    for (const [aggregate, ids] of publisher.acceptedByAggregate()) {
      const expected = docs.filter((d) => d.aggregateId === aggregate).map((d) => d.eventId);
      expect(ids).toEqual(expected);
    }
    await engine.close(100);
  });

  it('never has two publish calls in flight with events of the same aggregate', async () => {
    const { store, publisher, engine } = setup({ batchSize: 2, publishConcurrency: 4 });
    publisher.delayMs = 5;
    let settled = 0;
    for (let i = 0; i < 20; i++)
      engine.offer(store.insert({ aggregateId: 'same' }), () => settled++);
    await until(() => settled === 20);
    expect(publisher.accepted.map((e) => e.eventId)).toEqual(
      [...store.docs.values()].map((d) => d.eventId),
    );
    await engine.close(100);
  });

  it('holds back only the failing aggregate, retries with backoff, then continues in order', async () => {
    const { store, publisher, metrics, engine } = setup({ maxAttempts: 5 });
    const bad = store.insert({ aggregateId: 'bad' });
    const badLater = store.insert({ aggregateId: 'bad' });
    const good = [store.insert({ aggregateId: 'good' }), store.insert({ aggregateId: 'good' })];
    let failures = 2;
    publisher.script = (event) =>
      event.eventId === bad.eventId && failures-- > 0
        ? { status: 'retriable', error: new Error('partition busy') }
        : { status: 'ok' };
    for (const doc of [bad, badLater, ...good]) engine.offer(doc);
    await until(() => publisher.accepted.length === 2);
    expect(publisher.accepted.map((e) => e.aggregateId)).toEqual(['good', 'good']);
    expect(store.docs.get(String(bad._id))?.attempts).toBe(1);
    expect(store.docs.get(String(bad._id))?.nextAttemptAt).toBeInstanceOf(Date);
    // The later event of the failing aggregate waits in the collection, not in memory.
    expect(engine.inFlight).toBe(0);
    await until(() => store.pending().length === 0);
    expect(publisher.acceptedByAggregate().get('bad')).toEqual([bad.eventId, badLater.eventId]);
    expect(metrics.retried).toBe(2);
    expect(store.docs.get(String(bad._id))?.status).toBe('published');
    await engine.close(100);
  });

  it('dead-letters an event after maxAttempts with its error history, and its aggregate continues', async () => {
    const { store, publisher, metrics, engine } = setup({ maxAttempts: 3 });
    const poison = store.insert({ aggregateId: 'p' });
    const next = store.insert({ aggregateId: 'p' });
    publisher.script = (event) =>
      event.eventId === poison.eventId
        ? { status: 'retriable', error: new Error('always fails') }
        : { status: 'ok' };
    engine.offer(poison);
    engine.offer(next);
    await until(() => store.deadLetters.length === 1 && store.pending().length === 0);
    const [dead] = store.deadLetters;
    expect(dead.event.eventId).toBe(poison.eventId);
    expect(dead.record).toMatchObject({ reason: 'max-attempts', attempts: 3 });
    expect(dead.record.error).toContain('always fails');
    expect(dead.event.errorHistory).toHaveLength(2);
    expect(publisher.accepted.map((e) => e.eventId)).toEqual([next.eventId]);
    expect(metrics.deadLettered).toBe(1);
    await engine.close(100);
  });

  it('dead-letters a fatal rejection at once, without retries', async () => {
    const { store, publisher, metrics, engine } = setup();
    const huge = store.insert({ aggregateId: 'h' });
    const after = store.insert({ aggregateId: 'h' });
    publisher.script = (event) =>
      event.eventId === huge.eventId
        ? { status: 'fatal', error: new Error('MESSAGE_TOO_LARGE') }
        : { status: 'ok' };
    engine.offer(huge);
    engine.offer(after);
    await until(() => store.pending().length === 0);
    expect(store.deadLetters[0].record).toMatchObject({ reason: 'rejected', attempts: 1 });
    expect(metrics.retried).toBe(0);
    expect(publisher.accepted.map((e) => e.eventId)).toEqual([after.eventId]);
    await engine.close(100);
  });

  it('pauses on a broker outage without counting attempts, and resumes in order', async () => {
    const { store, publisher, metrics, engine } = setup({ maxAttempts: 2 });
    let down = true;
    publisher.script = () =>
      down
        ? { status: 'retriable', error: new Error('ECONNREFUSED'), outage: true }
        : { status: 'ok' };
    const docs = Array.from({ length: 12 }, (_, i) => store.insert({ aggregateId: `a${i % 4}` }));
    let settled = 0;
    for (const doc of docs) engine.offer(doc, () => settled++);
    await until(() => publisher.calls.length >= 3);
    expect(settled).toBe(0);
    expect(metrics.outages).toBe(1);
    expect(store.deadLetters).toHaveLength(0);
    expect(store.pending().every((doc) => doc.attempts === 0)).toBe(true);
    down = false;
    await until(() => settled === 12, 5000);
    expect(store.deadLetters).toHaveLength(0);
    for (const [aggregate, ids] of publisher.acceptedByAggregate()) {
      expect(ids).toEqual(docs.filter((d) => d.aggregateId === aggregate).map((d) => d.eventId));
    }
    await engine.close(100);
  });

  it('catches an aggregate up from the collection, oldest first (sweep)', async () => {
    const { store, publisher, engine } = setup({ batchSize: 2 });
    const docs = Array.from({ length: 5 }, () => store.insert({ aggregateId: 'old' }));
    expect(engine.requestCatchUp({ aggregateType: 'Order', aggregateId: 'old' })).toBe(true);
    await until(() => store.pending().length === 0);
    expect(publisher.accepted.map((e) => e.eventId)).toEqual(docs.map((d) => d.eventId));
    await engine.close(100);
  });

  it('defers settling change events of an aggregate that is catching up until it is live again', async () => {
    const { store, publisher, engine } = setup({ batchSize: 2 });
    publisher.delayMs = 20;
    for (let i = 0; i < 4; i++) store.insert({ aggregateId: 'c' });
    engine.requestCatchUp({ aggregateType: 'Order', aggregateId: 'c' });
    await until(() => publisher.calls.length === 1);
    const late = store.insert({ aggregateId: 'c' });
    let settled = false;
    engine.offer(late, () => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(settled).toBe(false);
    await until(() => settled);
    expect(store.pending()).toHaveLength(0);
    expect(publisher.accepted.at(-1)?.eventId).toBe(late.eventId);
    await engine.close(100);
  });

  it('holds an aggregate known to be waiting for a retry (start-up) until it is due', async () => {
    const { store, publisher, engine } = setup();
    const retryAt = new Date(Date.now() + 60);
    const first = store.insert({ aggregateId: 'r' }, { attempts: 1, nextAttemptAt: retryAt });
    const second = store.insert({ aggregateId: 'r' });
    engine.holdUntil({ aggregateType: 'Order', aggregateId: 'r' }, retryAt);
    engine.offer(second);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(publisher.accepted).toHaveLength(0);
    await until(() => store.pending().length === 0);
    expect(publisher.accepted.map((e) => e.eventId)).toEqual([first.eventId, second.eventId]);
    await engine.close(100);
  });

  it('bounds the events it holds in memory by maxInFlight', async () => {
    const { store, publisher, engine } = setup({ batchSize: 10, maxInFlight: 30 });
    publisher.delayMs = 30;
    let offered = 0;
    let maxHeld = 0;
    for (let page = 0; page < 10; page++) {
      await engine.waitForCapacity();
      for (let i = 0; i < 10; i++) {
        engine.offer(store.insert({ aggregateId: `m${i}` }));
        offered++;
      }
      maxHeld = Math.max(maxHeld, engine.inFlight);
    }
    expect(offered).toBe(100);
    expect(maxHeld).toBeLessThanOrEqual(30);
    await until(() => store.pending().length === 0);
    await engine.close(100);
  });

  it('on close, leaves queued events unsettled (they stay pending) and stops publishing', async () => {
    const { store, publisher, engine } = setup({ batchSize: 1, publishConcurrency: 1 });
    publisher.delayMs = 30;
    let settled = 0;
    for (let i = 0; i < 5; i++) engine.offer(store.insert({ aggregateId: 'x' }), () => settled++);
    await until(() => publisher.calls.length === 1);
    expect(await engine.close(1000)).toBe(true);
    expect(settled).toBe(1);
    expect(store.pending()).toHaveLength(4);
    engine.offer(store.insert({ aggregateId: 'y' }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(publisher.calls).toHaveLength(1);
  });

  it('does not settle an event whose failure could not be recorded, and retries it', async () => {
    const { store, publisher, engine } = setup({ maxAttempts: 5 });
    const doc = store.insert({ aggregateId: 'f' });
    let fail = true;
    publisher.script = () => {
      if (fail) {
        fail = false;
        store.failNext = 1; // recordFailure fails
        return { status: 'retriable', error: new Error('nope') };
      }
      return { status: 'ok' };
    };
    let settled = false;
    engine.offer(doc, () => (settled = true));
    await until(() => publisher.calls.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(settled).toBe(false);
    await until(() => settled && store.pending().length === 0);
    await engine.close(100);
  });

  it('publishes a duplicate offer once', async () => {
    const { store, publisher, engine } = setup({ publishConcurrency: 1 });
    publisher.delayMs = 10;
    const doc = store.insert({ aggregateId: 'd' });
    let settles = 0;
    engine.offer(doc, () => settles++);
    engine.offer(doc, () => settles++);
    await until(() => settles === 2);
    expect(publisher.accepted).toHaveLength(1);
    await engine.close(100);
  });
});
