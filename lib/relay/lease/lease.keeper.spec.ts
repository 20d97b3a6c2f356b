import { InMemoryRelayStateStore } from '../../../test/relay/support/in-memory-relay-state.store';
import { InMemoryRelayStore } from '../../../test/relay/support/in-memory-relay.store';
import type { RelayClock } from '../ports/relay-clock';
import { FencedWrites } from '../term/fenced.writes';
import { LeaseKeeper } from './lease.keeper';
import { LeaseLostError } from './lease-lost.error';

/** A process clock: wall time off the server's by `skewMs`, elapsed time advanced by hand. */
function processClock(server: { now: number }, skewMs: number) {
  let elapsed = 0;
  const clock: RelayClock = {
    now: () => server.now + skewMs,
    monotonic: () => elapsed,
    setTimeout: () => ({ cancel() {} }),
    sleep: async () => undefined,
    every: () => ({ cancel() {} }),
  };
  return { clock, advance: (ms: number) => (elapsed += ms) };
}

const lease = { enabled: true, durationMs: 15_000, renewMs: 5_000 };

describe('LeaseKeeper (the lease on the server clock, validity on elapsed time)', () => {
  it('takes over only once the server says the lease expired, whatever each process clock says', async () => {
    // Defect: expiry compared client clocks; a skew over ~10 s made two leaders.
    const server = { now: 1_000_000 };
    const state = new InMemoryRelayStateStore();
    state.serverNow = () => server.now;
    const a = processClock(server, -3_600_000); // an hour behind
    const b = processClock(server, +3_600_000); // an hour ahead
    const keeperA = new LeaseKeeper(state, 'a', lease, a.clock);
    const keeperB = new LeaseKeeper(state, 'b', lease, b.clock);
    expect(await keeperA.tick()).toBe('acquired');
    expect(state.lease?.expiresAt.getTime()).toBe(1_000_000 + 15_000);
    server.now += 14_999;
    expect(await keeperB.tick()).toBe('standby');
    server.now += 1;
    expect(await keeperB.tick()).toBe('acquired');
    expect(keeperB.fencing).toBe(2);
    expect(await keeperA.tick()).toBe('lost');
    expect(keeperA.isValid()).toBe(false);
  });

  it('counts itself leader only for durationMs - renewMs / 3 of elapsed time after the tick began', async () => {
    const server = { now: 0 };
    const state = new InMemoryRelayStateStore();
    state.serverNow = () => server.now;
    const a = processClock(server, 0);
    const keeper = new LeaseKeeper(state, 'a', lease, a.clock);
    await keeper.tick();
    a.advance(15_000 - Math.ceil(5_000 / 3) - 1);
    expect(keeper.isValid()).toBe(true);
    a.advance(1);
    expect(keeper.isValid()).toBe(false);
  });

  it('estimates the server time for what it stamps, not its own clock', async () => {
    const server = { now: 5_000_000 };
    const state = new InMemoryRelayStateStore();
    state.serverNow = () => server.now;
    const keeper = new LeaseKeeper(state, 'a', lease, processClock(server, 42_000).clock);
    await keeper.tick();
    expect(keeper.serverNow()).toBe(5_000_000);
  });

  it('a process paused past its validity sends no write when it wakes up', async () => {
    // Defect: a paused ex-leader could rewrite state the new leader owns.
    const server = { now: 0 };
    const state = new InMemoryRelayStateStore();
    state.serverNow = () => server.now;
    const a = processClock(server, 0);
    const keeper = new LeaseKeeper(state, 'a', lease, a.clock);
    await keeper.tick();
    const store = new InMemoryRelayStore();
    const event = store.insert({ aggregateId: 'x' });
    const writes = new FencedWrites(store, keeper.fencing as number, () => keeper.isValid());
    await writes.markPublished([event._id], new Date());
    expect(store.writes).toHaveLength(1);
    a.advance(30_000); // a stop-the-world pause
    await expect(writes.markPublished([event._id], new Date())).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    expect(store.writes).toHaveLength(1);
  });

  it('a write stamped by a newer leader is never overwritten by an older one', async () => {
    const store = new InMemoryRelayStore();
    const event = store.insert({ aggregateId: 'x' });
    await store.recordFailure(
      event,
      { attempts: 3, nextAttemptAt: new Date(1), error: 'new', at: new Date() },
      7,
    );
    await store.recordFailure(
      event,
      { attempts: 1, nextAttemptAt: new Date(2), error: 'old', at: new Date() },
      6,
    );
    await store.markPublished([event._id], new Date(), 6);
    expect(store.doc(event._id)).toMatchObject({
      status: 'pending',
      attempts: 3,
      lastError: 'new',
      relayFence: 7,
    });
  });
});
