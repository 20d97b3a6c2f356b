import { InMemoryRelayStateStore } from '../../testing/relay/in-memory-relay-state.store';
import { InMemoryRelayStore } from '../../testing/relay/in-memory-relay.store';
import { ScriptedChangeSource } from '../../testing/relay/scripted-change.source';
import { ScriptedPublisher } from '../../testing/relay/scripted.publisher';
import { RelayEngine } from '../engine/relay.engine';
import { ChangeSourceError } from '../ports/change-source';
import type { ChangeCursor, ChangeSource } from '../ports/change-source';
import { systemClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import { CollectionDrain } from '../recovery/collection.drain';
import { OutboxRelayMetrics } from '../relay.metrics';
import { FencedWrites } from '../term/fenced.writes';
import { ChangeStreamFollower } from './change-stream.follower';
import { Checkpointer } from './checkpointer';

const until = async (condition: () => boolean, timeoutMs = 3000): Promise<void> => {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

function recordingLogger() {
  const lines: Array<{ level: string; message: string }> = [];
  const logger: RelayLogger = {
    log: (message) => lines.push({ level: 'log', message }),
    warn: (message) => lines.push({ level: 'warn', message }),
    error: (message) => lines.push({ level: 'error', message }),
    debug: () => undefined,
  };
  return { lines, logger };
}

function setup(over: { changes?: ChangeSource; stopped?: AbortSignal } = {}) {
  const store = new InMemoryRelayStore();
  const state = new InMemoryRelayStateStore();
  const source = new ScriptedChangeSource();
  const publisher = new ScriptedPublisher();
  const metrics = new OutboxRelayMetrics();
  const { lines, logger } = recordingLogger();
  const scheduled: Date[] = [];
  const backoff = { initialMs: 10, maxMs: 20, jitter: 0 };
  const engine = new RelayEngine(
    {
      batchSize: 5,
      maxBatchBytes: 1_000_000,
      maxInFlight: 50,
      maxInFlightBytes: 100_000_000,
      maxAttempts: 3,
      backoff,
      publishConcurrency: 2,
    },
    {
      outbox: store,
      writes: new FencedWrites(store, 1, () => true),
      publisher,
      clock: systemClock,
      now: Date.now,
      canPublish: () => true,
      random: () => 0.5,
      logger,
      holdsLogger: logger,
      metrics,
    },
  );
  const checkpointer = new Checkpointer(
    { events: 1, ms: 1 },
    {
      state,
      fencing: 1,
      clock: systemClock,
      now: Date.now,
      leaseValid: () => true,
      logger,
      metrics,
      fencedOff: () => undefined,
    },
  );
  const follower = new ChangeStreamFollower(
    { batchSize: 5, backoff },
    {
      changes: over.changes ?? source,
      outbox: store,
      engine,
      drain: new CollectionDrain(store, engine, 5, logger),
      checkpointer,
      clock: systemClock,
      random: () => 0.5,
      logger,
      metrics,
      stopped: over.stopped ?? new AbortController().signal,
      scheduled: (availableAt) => scheduled.push(availableAt),
    },
  );
  let active = true;
  const run = (from: unknown) => follower.run(from, () => active);
  const stop = async (running: Promise<void>) => {
    active = false;
    await follower.stop();
    await running;
    await engine.close(100);
  };
  /** An event inserted and committed: in the collection and on the stream. */
  const commit = (aggregateId: string) => {
    const event = store.insert({ aggregateId });
    source.push(event);
    return event;
  };
  return {
    engine,
    store,
    state,
    source,
    publisher,
    metrics,
    lines,
    follower,
    checkpointer,
    run,
    stop,
    commit,
    scheduled,
  };
}

describe('ChangeStreamFollower (the stream path never stops on its own)', () => {
  it('a failed read of the collection reopens the stream from the last safe position and goes on', async () => {
    // Defect: a failed read in the stream path stopped the stream path for good, silently.
    const t = setup();
    for (let i = 0; i < 5; i++) t.commit(`a${i}`);
    const running = t.run(-1);
    await until(() => t.publisher.accepted.length === 5);
    await until(() => t.state.checkpoint.token === 4);
    t.store.failNext = 1; // the next findPendingState fails
    for (let i = 5; i < 10; i++) t.commit(`a${i}`);
    await until(() => t.publisher.accepted.length === 10 && t.store.pending().length === 0);
    expect(t.source.opened).toEqual([-1, 4]);
    expect(t.follower.state).toBe('following');
    expect(
      t.lines.filter((line) => line.level === 'warn' && /change stream failed/.test(line.message)),
    ).toHaveLength(1);
    expect(t.lines.some((line) => /followed again after 1 failure/.test(line.message))).toBe(true);
    await until(() => t.state.checkpoint.token === 9);
    await t.stop(running);
  });

  it('ordinary failures, however many, never throw away a valid position', async () => {
    // Defect: three ordinary failures (a long election) discarded a valid token.
    const t = setup();
    t.source.failNext = ['transient', 'transient', 'transient', 'transient', 'transient'];
    for (let i = 0; i < 3; i++) t.commit(`b${i}`);
    const running = t.run(0);
    await until(() => t.publisher.accepted.length === 2);
    expect(t.source.opened).toEqual([0, 0, 0, 0, 0, 0]);
    expect(t.metrics.recoveries).toBe(0);
    await t.stop(running);
  });

  it('a lost position is counted, logged as an error, the token cleared, and the collection drained', async () => {
    const t = setup();
    for (let i = 0; i < 6; i++) t.commit(`c${i % 2}`);
    t.source.historyStart = 5; // the oplog rolled past position 0
    t.state.checkpoint = { token: 0, fencing: 1 };
    const running = t.run(0);
    await until(() => t.store.pending().length === 0);
    expect(t.metrics.recoveries).toBe(1);
    expect(t.source.opened).toEqual([0, undefined]);
    expect(
      t.lines.some((line) => line.level === 'error' && /position is lost/.test(line.message)),
    ).toBe(true);
    // Everything is published, each aggregate in order, including the one before the position.
    const c0 = [...t.store.docs.values()].filter((doc) => doc.aggregateId === 'c0');
    expect(t.publisher.acceptedByAggregate().get('c0')).toEqual(c0.map((doc) => doc.eventId));
    await t.stop(running);
  });

  it('an invalidated stream (collection dropped or renamed) is a lost position, not a silent reopen', async () => {
    // Defect: with $match insert, an invalidate closed the cursor and the relay reopened silently.
    const t = setup();
    t.commit('d');
    t.source.failNext = [
      new ChangeSourceError('position-lost', 'the change stream was invalidated (drop)'),
    ];
    const running = t.run(-1);
    await until(() => t.metrics.recoveries === 1 && t.store.pending().length === 0);
    expect(t.source.opened).toEqual([-1, undefined]);
    await t.stop(running);
  });

  it('does not save a position before every drained event is settled', async () => {
    const t = setup();
    const old = t.store.insert({ aggregateId: 'e' }); // pending, before the stream opens
    t.publisher.delayMs = 100;
    const running = t.run(undefined);
    await until(() => t.publisher.calls.length === 1);
    t.commit('f');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(t.state.saves).toEqual([]); // the drained event is not acknowledged yet
    await until(() => t.store.pending().length === 0);
    await until(() => t.state.saves.length > 0);
    expect(t.publisher.accepted[0].eventId).toBe(old.eventId);
    await t.stop(running);
  });

  it('never takes a scheduled event from the stream: settled at once, only its due time noted', async () => {
    const t = setup();
    const dueAt = new Date(Date.now() - 1000); // due already: still the due reader's
    const scheduled = t.store.insert({ aggregateId: 'h' }, { availableAt: dueAt });
    t.source.push(scheduled);
    const plain = t.commit('i');
    const running = t.run(-1);
    await until(() => t.publisher.accepted.length === 1);
    await until(() => t.state.checkpoint.token === 1); // passed the scheduled event
    expect(t.publisher.accepted.map((event) => event.eventId)).toEqual([plain.eventId]);
    expect(t.scheduled).toEqual([dueAt]);
    expect(t.store.doc(scheduled._id)?.status).toBe('pending');
    expect(t.store.writes.flatMap((write) => write.ids)).not.toContain(String(scheduled._id));
    await t.stop(running);
  });

  it('drains an event whose writer clock is ahead (no bound compares two machines’ clocks)', async () => {
    const t = setup();
    const ahead = t.store.insert(
      { aggregateId: 'g' },
      { occurredAt: new Date(Date.now() + 3_600_000) },
    );
    const running = t.run(undefined);
    await until(() => t.store.pending().length === 0);
    expect(t.publisher.accepted.map((event) => event.eventId)).toEqual([ahead.eventId]);
    await t.stop(running);
  });

  it('once caught up, an idle read lets catch-up reads go first (reserveIdle); a full batch takes a page again', async () => {
    // Defect: an idle read held a page of the in-flight budget for the idle time; with
    // maxInFlight = batchSize the due reader's catch-up reads got one page per idle time.
    const t = setup();
    const idle = jest.spyOn(t.engine.budget, 'reserveIdle');
    const paged = jest.spyOn(t.engine.budget, 'reserve');
    t.commit('a');
    t.commit('b');
    const running = t.run(-1);
    await until(() => t.publisher.accepted.length === 2);
    await until(() => idle.mock.calls.length > 0);
    expect(idle.mock.calls[0]).toEqual([5]); // a page: half the budget (50) is more
    expect(paged.mock.calls[0]).toEqual([5]);
    const pages = paged.mock.calls.length;
    // A batch that fills its reservation: more may be waiting, the next read takes a page.
    for (let i = 0; i < 5; i++) t.commit(`c${i}`);
    await until(() => paged.mock.calls.length > pages);
    expect(paged.mock.calls[pages]).toEqual([5]);
    await t.stop(running);
  });

  it('a term that ends while its stream is still opening does not wait for the opening; a stream opened too late is closed', async () => {
    // Defect: the follower awaited `open()` past the end of its term; a cluster-wide stream's
    // hub that never covered the term's database held the term's end, and with it the app's
    // shutdown, for good.
    let opened: (cursor: ChangeCursor) => void = () => undefined;
    const opening = new Promise<ChangeCursor>((resolve) => (opened = resolve));
    const term = new AbortController();
    const t = setup({ changes: { open: () => opening }, stopped: term.signal });
    let ran = false;
    const running = t.follower.run(undefined, () => !term.signal.aborted).then(() => (ran = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ran).toBe(false);
    term.abort();
    await t.follower.stop();
    await running;
    expect(t.follower.state).toBe('stopped');
    let closed = false;
    opened({ next: () => new Promise(() => undefined), close: async () => void (closed = true) });
    await until(() => closed);
    await t.engine.close(100);
  });
});
