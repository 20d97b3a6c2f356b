import { InMemoryRelayStore } from '../../testing/relay/in-memory-relay.store';
import { ScriptedPublisher } from '../../testing/relay/scripted.publisher';
import { RelayEngine } from '../engine/relay.engine';
import type { RelayClock, RelayTimer } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import { OutboxRelayMetrics } from '../relay.metrics';
import { FencedWrites } from '../term/fenced.writes';
import { DueReader } from './due.reader';

/** Virtual time: timers fire only when `advance` passes them. */
class VirtualClock implements RelayClock {
  t = 0;
  private timers: Array<{ at: number; fn: () => void; live: boolean }> = [];
  now = (): number => this.t;
  monotonic = (): number => this.t;
  setTimeout(fn: () => void, ms: number): RelayTimer {
    const timer = { at: this.t + Math.max(0, ms), fn, live: true };
    this.timers.push(timer);
    return { cancel: () => (timer.live = false) };
  }
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, ms));
  }
  every(): RelayTimer {
    return { cancel: () => undefined };
  }
  get armed(): number[] {
    return this.timers.filter((timer) => timer.live).map((timer) => timer.at);
  }
  /** Moves time forward `ms`, firing due timers in order, letting promises run between them. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await settle();
      const next = this.timers
        .filter((timer) => timer.live && timer.at <= end)
        .sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.t = Math.max(this.t, next.at);
      next.live = false;
      next.fn();
    }
    this.t = end;
    await settle();
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

const silent: RelayLogger = { log() {}, warn() {}, error() {}, debug() {} };
const EPOCH = Date.UTC(2026, 11, 1);

/** `readMs`: how long (virtual) a catch-up read of an aggregate takes. */
function setup(options: { maxInFlight?: number; readMs?: number } = {}) {
  const clock = new VirtualClock();
  const store = new InMemoryRelayStore();
  /**
   * The database server's clock: EPOCH + virtual time, plus `skew` (ahead or behind the timers);
   * its majority commit point lags `majorityLag` ms behind it, or stands still at `majorityStill`.
   */
  const server: { skew: number; majorityLag: number; majorityStill?: number } = {
    skew: 0,
    majorityLag: 0,
  };
  store.serverNow = () => new Date(EPOCH + clock.t + server.skew);
  store.majorityNow = () =>
    new Date(server.majorityStill ?? EPOCH + clock.t + server.skew - server.majorityLag);
  const publisher = new ScriptedPublisher();
  const calls: string[] = [];
  const counted = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(key));
        const call = () => (value as (...a: unknown[]) => unknown).apply(target, args);
        if (key !== 'findPendingOfAggregates' || !options.readMs) return call();
        return clock.sleep(options.readMs).then(call);
      };
    },
  });
  const engine = new RelayEngine(
    {
      batchSize: Math.min(10, options.maxInFlight ?? 100),
      ...{ maxBatchBytes: 1_000_000, maxAttempts: 3, publishConcurrency: 1 },
      ...{ maxInFlight: options.maxInFlight ?? 100, maxInFlightBytes: 10_000_000 },
      backoff: { initialMs: 100, maxMs: 1000, jitter: 0 },
    },
    {
      ...{ outbox: counted, writes: new FencedWrites(counted, 1, () => true), publisher, clock },
      ...{ logger: silent, holdsLogger: silent, metrics: new OutboxRelayMetrics() },
      now: () => EPOCH + clock.t,
      dueBy: (): Date => reader.dueBy(),
      canPublish: () => true,
      random: () => 0.5,
    },
  );
  let active = true;
  const reader: DueReader = new DueReader(
    { recheckMs: 5000, retryMs: 100 },
    { outbox: counted, engine, clock, active: () => active, logger: silent },
  );
  const at = (ms: number) => new Date(EPOCH + ms);
  const published = () => publisher.accepted.map((event) => event.eventId);
  const end = () => {
    active = false;
  };
  return { clock, store, server, publisher, engine, reader, calls, at, published, end };
}

describe('DueReader (scheduled events, published once due by the server clock)', () => {
  it('publishes a scheduled event when due, never before, with one timer', async () => {
    const t = setup();
    const event = t.store.insert({ aggregateId: 'a' }, { availableAt: t.at(3000) });
    t.reader.start();
    await t.clock.advance(0);
    expect(t.clock.armed).toEqual([3000]); // one timer, at the due time
    await t.clock.advance(2999);
    expect(t.published()).toEqual([]);
    await t.clock.advance(1);
    expect(t.published()).toEqual([event.eventId]);
    expect(t.clock.armed).toEqual([]); // nothing scheduled any more: no timer
    await t.reader.stop();
    await t.engine.close(100);
  });

  it('a server clock behind the timer: the pass finds nothing due and waits for the rest', async () => {
    const t = setup();
    const event = t.store.insert({ aggregateId: 'a' }, { availableAt: t.at(3000) });
    t.reader.start();
    await t.clock.advance(0);
    t.server.skew = -400; // the server's clock now lags 400 ms behind the timers
    await t.clock.advance(3000);
    expect(t.published()).toEqual([]);
    await t.clock.advance(399);
    expect(t.published()).toEqual([]);
    await t.clock.advance(1);
    expect(t.published()).toEqual([event.eventId]);
    await t.reader.stop();
    await t.engine.close(100);
  });

  it('publishes by the majority commit point, not the primary clock: a write committed before the due time is seen', async () => {
    const t = setup();
    const event = t.store.insert({ aggregateId: 'a' }, { availableAt: t.at(3000) });
    t.server.majorityLag = 500; // writes committed in the last 500 ms are still replicating
    t.reader.start();
    await t.clock.advance(0);
    expect(t.reader.dueBy()).toEqual(t.at(-500));
    expect(t.clock.armed).toEqual([3500]); // when the majority time reaches the due time
    await t.clock.advance(3000);
    // Due on the primary's clock, but a cancellation committed at 2900 may not be visible yet.
    expect(t.published()).toEqual([]);
    await t.clock.advance(499);
    expect(t.published()).toEqual([]);
    await t.clock.advance(1);
    expect(t.published()).toEqual([event.eventId]);
    expect(t.reader.dueBy()).toEqual(t.at(3000));
    await t.reader.stop();
    await t.engine.close(100);
  });

  it("mongod's majority time in whole seconds: an event due at .300 goes out then (the time of a majority write of its own), not when the second ticks", async () => {
    const t = setup();
    // What hello reports: the last majority write's time, in whole seconds.
    t.store.majorityNow = () => new Date(Math.floor((EPOCH + t.clock.t) / 1000) * 1000);
    t.store.majorityWriteNow = () => new Date(EPOCH + t.clock.t);
    const event = t.store.insert({ aggregateId: 'a' }, { availableAt: t.at(3_300) });
    t.reader.start();
    await t.clock.advance(3_300);
    expect(t.published()).toEqual([event.eventId]);
    expect(t.calls.filter((call) => call === 'majorityWriteTime')).toHaveLength(1);
    await t.reader.stop();
    await t.engine.close(100);
  });

  it('dueBy is the majority time read last: never moved on by the local time since, and after a failover to a primary whose clock is behind, its time', async () => {
    const t = setup();
    t.store.insert({ aggregateId: 'a' }, { availableAt: t.at(60_000) });
    t.server.majorityStill = EPOCH + 5_000;
    await t.clock.advance(10_000);
    t.reader.start();
    await t.clock.advance(0);
    expect(t.reader.dueBy()).toEqual(t.at(5_000));
    // Defect (mutation due-by-extrapolated): the time read plus the time since on this machine;
    // a cancellation committed before then but still replicating is not seen.
    await t.clock.advance(1_000); // no pass meanwhile: the next is recheckMs (5 s) away
    expect(t.reader.dueBy()).toEqual(t.at(5_000));
    // The new primary's clock is 2 s behind the old one's: a cancel there checks its own time.
    t.server.majorityStill = EPOCH + 3_000;
    await t.clock.advance(5_000);
    expect(t.reader.dueBy()).toEqual(t.at(3_000));
    await t.reader.stop();
    await t.engine.close(100);
  });

  it('a cancellation majority-committed only after the due time is honoured', async () => {
    const t = setup();
    const event = t.store.insert({ aggregateId: 'a' }, { availableAt: t.at(3000) });
    t.server.majorityLag = 500;
    t.reader.start();
    await t.clock.advance(2900);
    // The application cancels at 2900 (before the due time); the majority commit point passes
    // 2900 at 3400: the store's (majority) reads see it from then on.
    t.clock.setTimeout(() => (t.store.docs.get(String(event._id))!.status = 'cancelled'), 500);
    await t.clock.advance(1000);
    expect(t.published()).toEqual([]);
    expect(t.store.docs.get(String(event._id))?.status).toBe('cancelled');
    await t.reader.stop();
    await t.engine.close(100);
  });

  it('a majority time that stands still (an idle deployment) is read again no more than every 200 ms', async () => {
    const t = setup();
    t.store.insert({ aggregateId: 'a' }, { availableAt: t.at(1001) });
    t.server.majorityStill = EPOCH + 1000; // the last majority-committed write, then nothing
    t.reader.start();
    await t.clock.advance(2000);
    const passes = t.calls.filter((call) => call === 'majorityTime').length;
    expect(passes).toBeLessThanOrEqual(1 + 2000 / 200);
    expect(t.published()).toEqual([]);
    t.server.majorityStill = undefined; // the next write (a lease renewal, the periodic no-op)
    await t.clock.advance(200);
    expect(t.published()).toHaveLength(1);
    await t.reader.stop();
    await t.engine.close(100);
  });

  it('keeps aggregate order across a delay, and stops a catch-up before an event not due', async () => {
    const t = setup();
    const first = t.store.insert({ aggregateId: 'a' }, { availableAt: t.at(1000) });
    const inherits = t.store.insert({ aggregateId: 'a' }, { availableAt: t.at(1000) });
    const later = t.store.insert({ aggregateId: 'a' }, { availableAt: t.at(5000) });
    const other = t.store.insert({ aggregateId: 'b' }, { availableAt: t.at(2000) });
    t.reader.start();
    await t.clock.advance(1000);
    expect(t.published()).toEqual([first.eventId, inherits.eventId]);
    await t.clock.advance(1000);
    expect(t.published()).toEqual([first.eventId, inherits.eventId, other.eventId]);
    await t.clock.advance(2999);
    expect(t.published()).toHaveLength(3);
    await t.clock.advance(1);
    expect(t.published()).toEqual([first, inherits, other, later].map((e) => e.eventId));
    await t.reader.stop();
    await t.engine.close(100);
  });

  it('a due time noted by the stream brings the timer forward; the re-check is capped', async () => {
    const t = setup();
    t.store.insert({ aggregateId: 'far' }, { availableAt: t.at(60_000) });
    t.reader.start();
    await t.clock.advance(0);
    expect(t.clock.armed).toEqual([5000]); // capped at recheckMs
    const soon = t.store.insert({ aggregateId: 'soon' }, { availableAt: t.at(700) });
    t.reader.noteDue(t.at(700));
    expect(t.clock.armed).toEqual([700]); // one timer, moved
    await t.clock.advance(700);
    expect(t.published()).toEqual([soon.eventId]);
    await t.reader.stop();
    await t.engine.close(100);
  });

  it('takes no more aggregates than the engine has room for, and comes back for the rest', async () => {
    const t = setup({ maxInFlight: 2 });
    t.publisher.delayMs = 0;
    const events = ['a', 'b', 'c', 'd', 'e'].map((id) =>
      t.store.insert({ aggregateId: id }, { availableAt: t.at(0) }),
    );
    t.reader.start();
    await t.clock.advance(0);
    expect(t.engine.trackedAggregates).toBeLessThanOrEqual(2);
    await t.clock.advance(5000);
    expect(new Set(t.published())).toEqual(new Set(events.map((event) => event.eventId)));
    expect(t.store.pending()).toHaveLength(0);
    await t.reader.stop();
    await t.engine.close(100);
  });

  it('nothing scheduled: one pass, then no timer and no reads', async () => {
    const t = setup();
    t.reader.start();
    await t.clock.advance(60_000);
    expect(t.calls).toEqual([
      'majorityTime',
      'findDueAggregates',
      'findDueAggregates',
      'nextDueAt',
    ]);
    expect(t.clock.armed).toEqual([]);
    await t.reader.stop();
    await t.engine.close(100);
  });

  it('stops with the term: no pass after stop, its timer cancelled', async () => {
    const t = setup();
    t.store.insert({ aggregateId: 'a' }, { availableAt: t.at(1000) });
    t.reader.start();
    await t.clock.advance(0);
    t.end();
    await t.reader.stop();
    expect(t.clock.armed).toEqual([]);
    await t.clock.advance(2000);
    expect(t.published()).toEqual([]);
    expect(t.store.pending()).toHaveLength(1); // nothing lost: the next owner finds it by the index
    await t.engine.close(100);
  });

  it('a failed read is retried', async () => {
    const t = setup();
    const event = t.store.insert({ aggregateId: 'a' }, { availableAt: t.at(0) });
    t.store.failNext = 1;
    t.reader.start();
    await t.clock.advance(0);
    expect(t.published()).toEqual([]);
    await t.clock.advance(100);
    expect(t.published()).toEqual([event.eventId]);
    await t.reader.stop();
    await t.engine.close(100);
  });

  it('a majority write that fails (no majority within its wtimeout) fails the pass; the next pass, after the back-off, publishes', async () => {
    const t = setup();
    t.store.majorityNow = () => new Date(Math.floor((EPOCH + t.clock.t) / 1000) * 1000);
    let majority = false;
    t.store.majorityWriteNow = () => {
      if (!majority) throw new Error('waiting for replication timed out');
      return new Date(EPOCH + t.clock.t);
    };
    const event = t.store.insert({ aggregateId: 'a' }, { availableAt: t.at(3_300) });
    t.reader.start();
    await t.clock.advance(3_300);
    expect(t.published()).toEqual([]); // never published by a time that is not majority-committed
    majority = true;
    await t.clock.advance(100); // retryMs
    expect(t.published()).toEqual([event.eventId]);
    await t.reader.stop();
    await t.engine.close(100);
  });

  it('maxInFlight 1: aggregates due together go out one after another, not one per pass', async () => {
    // Defect: an aggregate refused for want of a lane waited for the next pass, 1 s later.
    const t = setup({ maxInFlight: 1, readMs: 30 });
    t.publisher.delayMs = 0;
    const events = Array.from({ length: 10 }, (_, i) =>
      t.store.insert({ aggregateId: `a${i}` }, { availableAt: t.at(0) }),
    );
    t.reader.start();
    // Two reads of 30 ms an aggregate (its page, then the check that nothing is left).
    await t.clock.advance(1000);
    expect(new Set(t.published())).toEqual(new Set(events.map((event) => event.eventId)));
    await t.reader.stop();
    await t.engine.close(100);
  });

  it('asks for the aggregates whose due events are marked (held back) after the others', async () => {
    // Defect: aggregates waiting for a held topic led every page (by due time) and took the
    // engine's room; the due aggregates of the other topics waited for the topic.
    const t = setup({ maxInFlight: 1 });
    t.publisher.delayMs = 0;
    const held = t.store.insert({ aggregateId: 'held' }, { availableAt: t.at(0) });
    await t.store.markHeld([held._id], new Date(0), 1);
    const due = t.store.insert({ aggregateId: 'due' }, { availableAt: t.at(100) });
    t.clock.t = 100;
    t.reader.start();
    await t.clock.advance(500);
    expect(t.published()).toEqual([due.eventId, held.eventId]);
    await t.reader.stop();
    await t.engine.close(100);
  });
});
