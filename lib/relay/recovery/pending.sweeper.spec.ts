import { InMemoryRelayStore } from '../../testing/relay/in-memory-relay.store';
import { ScriptedPublisher } from '../../testing/relay/scripted.publisher';
import { RelayEngine } from '../engine/relay.engine';
import { systemClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import { OutboxRelayMetrics } from '../relay.metrics';
import { FencedWrites } from '../term/fenced.writes';
import { PendingSweeper } from './pending.sweeper';

const silent: RelayLogger = { log() {}, warn() {}, error() {}, debug() {} };
const until = async (condition: () => boolean, timeoutMs = 3000): Promise<void> => {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

function setup(batchSize = 5) {
  const store = new InMemoryRelayStore();
  const publisher = new ScriptedPublisher();
  const metrics = new OutboxRelayMetrics();
  const writes = new FencedWrites(store, null, () => true);
  const engine = new RelayEngine(
    {
      batchSize,
      maxBatchBytes: 1_000_000,
      maxInFlight: 100,
      maxInFlightBytes: 100_000_000,
      maxAttempts: 3,
      backoff: { initialMs: 10, maxMs: 20, jitter: 0 },
      publishConcurrency: 2,
    },
    {
      outbox: store,
      writes,
      publisher,
      clock: systemClock,
      now: Date.now,
      canPublish: () => true,
      random: () => 0.5,
      logger: silent,
      holdsLogger: silent,
      metrics,
    },
  );
  const noted: Date[] = [];
  const sweeper = new PendingSweeper(
    { batchSize, sweepGraceMs: 0 },
    {
      ...{ outbox: store, writes, engine, now: () => Date.now() + 1, logger: silent, metrics },
      scheduledDue: (at) => noted.push(at),
    },
  );
  return { store, publisher, metrics, engine, sweeper, noted };
}

describe('PendingSweeper (the collection is the source of truth)', () => {
  it('reaches an aggregate behind thousands of pending events of tracked aggregates', async () => {
    // Defect: the sweep took the first 2,000 pending rows by _id, which could all belong to
    // blocked aggregates, and never reached the rest.
    const { store, publisher, engine, sweeper } = setup();
    const blocked = { aggregateType: 'Order', aggregateId: 'blocked' };
    engine.holdUntil(blocked, new Date(Date.now() + 60_000));
    for (let i = 0; i < 100; i++) store.insert({ aggregateId: 'blocked' });
    const starved = store.insert({ aggregateId: 'other' });
    for (let sweep = 0; sweep < 6 && !publisher.accepted.length; sweep++)
      await sweeper.sweep(false);
    await until(() => store.doc(starved._id)?.status === 'published');
    expect(publisher.accepted.map((event) => event.eventId)).toEqual([starved.eventId]);
    await engine.close(100);
  });

  it('refreshes the lag gauges', async () => {
    const { store, metrics, engine, sweeper } = setup();
    store.insert({ aggregateId: 'g' }, { occurredAt: new Date(Date.now() - 5000) });
    engine.holdUntil({ aggregateType: 'Order', aggregateId: 'g' }, new Date(Date.now() + 60_000));
    await sweeper.sweep(false);
    expect(metrics.pendingCount).toBe(1);
    expect(metrics.oldestPendingAgeMs).toBeGreaterThanOrEqual(5000);
    await engine.close(100);
  });

  it('counts scheduled events apart from the lag, never hands them out, and notes the earliest due time', async () => {
    const { store, metrics, engine, sweeper, publisher, noted } = setup();
    const overdue = new Date(Date.now() - 2000);
    const later = new Date(Date.now() + 60_000);
    store.insert({ aggregateId: 's1' }, { availableAt: overdue, occurredAt: new Date(0) });
    store.insert({ aggregateId: 's2' }, { availableAt: later, occurredAt: new Date(0) });
    await sweeper.sweep(false);
    expect(metrics.pendingCount).toBe(0);
    expect(metrics.scheduledCount).toBe(2);
    expect(metrics.nextDueAt).toBe(later.getTime());
    expect(metrics.oldestOverdueAgeMs).toBeGreaterThanOrEqual(2000);
    expect(noted).toEqual([overdue]);
    expect(engine.trackedAggregates).toBe(0); // the due reader's, not the sweep's
    expect(publisher.calls).toHaveLength(0);
    await engine.close(100);
  });

  it('finishes a dead-letter move that a crash interrupted (marked dead, not yet copied)', async () => {
    // Defect: dead-lettering was an upsert then a delete without a transaction.
    const { store, engine, sweeper } = setup();
    const event = store.insert({ aggregateId: 'dead' });
    await store.markDead(
      event,
      { reason: 'rejected', error: 'MESSAGE_TOO_LARGE', attempts: 1, at: new Date() },
      3,
    );
    expect(store.pending()).toHaveLength(0);
    await sweeper.sweep(false);
    expect(store.deadLetters.map((letter) => letter.event.eventId)).toEqual([event.eventId]);
    expect(store.doc(event._id)).toBeUndefined();
    await engine.close(100);
  });
});
