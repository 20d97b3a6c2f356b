import { InMemoryRelayStore } from '../../testing/relay/in-memory-relay.store';
import { ScriptedPublisher } from '../../testing/relay/scripted.publisher';
import { systemClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import { OutboxRelayMetrics } from '../relay.metrics';
import { FencedWrites } from '../term/fenced.writes';
import { RelayEngine } from './relay.engine';

const silent: RelayLogger = { log() {}, warn() {}, error() {}, debug() {} };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const until = async (condition: () => boolean): Promise<void> => {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > 3000) throw new Error('condition not met in time');
    await pause(5);
  }
};

const engineOn = (
  store: InMemoryRelayStore,
  publisher: ScriptedPublisher,
  sizes: { batchSize: number; maxInFlight: number; readConcurrency?: number },
) =>
  new RelayEngine(
    {
      ...{ ...sizes, maxBatchBytes: 1_000_000, maxInFlightBytes: 1_000_000 },
      ...{ maxAttempts: 3, backoff: { initialMs: 10, maxMs: 20, jitter: 0 } },
      publishConcurrency: 1,
    },
    {
      ...{ outbox: store, writes: new FencedWrites(store, 1, () => true) },
      ...{ publisher, clock: systemClock, now: Date.now },
      ...{ canPublish: () => true, random: () => 0.5, logger: silent, holdsLogger: silent },
      metrics: new OutboxRelayMetrics(),
    },
  );

describe('CatchUpReader (an aggregate read from the collection, page by page)', () => {
  it('keeps its reservation while it waits for the published marks of a page, so an idle read does not take it', async () => {
    // Defect: given back while the marks landed, the one event of room (maxInFlight 1) went to
    // the change stream's idle read, and the aggregate's next page waited the idle time.
    const store = new InMemoryRelayStore();
    const markPublished = store.markPublished.bind(store);
    store.markPublished = async (...args) => {
      await pause(30);
      return markPublished(...args);
    };
    const publisher = new ScriptedPublisher();
    const engine = engineOn(store, publisher, { batchSize: 1, maxInFlight: 1 });
    for (let i = 0; i < 3; i++) store.insert({ aggregateId: 'a' });
    engine.requestCatchUp({ aggregateType: 'Order', aggregateId: 'a' });
    // The first event was sent; its mark is on its way (30 ms).
    await until(() => publisher.accepted.length === 1);
    let pendingWhenGranted: number | undefined;
    const idle = engine.budget.reserveIdle(1).then((reservation) => {
      pendingWhenGranted = store.pending().length;
      return reservation;
    });
    await until(() => store.pending().length === 0);
    engine.budget.settleReservation(await idle, 0, 0);
    expect(pendingWhenGranted).toBe(0);
    await engine.close(100);
  });

  it('reads the aggregates waiting for a read together, a page at a time, each in its order', async () => {
    // Defect: one query per aggregate; a burst of due aggregates went out at the rate of reads.
    const store = new InMemoryRelayStore();
    const reads: number[] = [];
    const findPending = store.findPendingOfAggregates.bind(store);
    store.findPendingOfAggregates = async (refs, ...rest) => {
      reads.push(refs.length);
      return findPending(refs, ...rest);
    };
    const publisher = new ScriptedPublisher();
    const engine = engineOn(store, publisher, {
      ...{ batchSize: 50, maxInFlight: 500, readConcurrency: 1 },
    });
    const written = new Map<string, string[]>();
    for (let round = 0; round < 3; round++) {
      for (let a = 0; a < 60; a++) {
        const aggregateId = `a${String(a).padStart(2, '0')}`;
        const event = store.insert({ aggregateId }, { sequence: 3 - round });
        written.set(aggregateId, [event.eventId, ...(written.get(aggregateId) ?? [])]);
      }
    }
    for (const aggregateId of written.keys()) {
      expect(engine.requestCatchUp({ aggregateType: 'Order', aggregateId })).toBe(true);
    }
    await until(() => store.pending().length === 0);
    expect(publisher.acceptedByAggregate()).toEqual(written);
    expect(publisher.accepted).toHaveLength(180);
    // 180 events in pages of 50: a few reads, each of many aggregates (not 60 reads of one).
    expect(reads.length).toBeLessThanOrEqual(12);
    expect(Math.max(...reads)).toBeGreaterThan(10);
    await engine.close(100);
  });
});
