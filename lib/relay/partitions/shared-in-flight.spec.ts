import { SharedInFlight } from './shared-in-flight';

describe('SharedInFlight (one in-flight bound for the partitions of an instance)', () => {
  it('gives each partition an equal part and never more than the whole', async () => {
    const pool = new SharedInFlight(100, 1_000_000);
    const a = pool.share();
    const reserved = a.tryReserve(100);
    expect(reserved?.events).toBe(100);
    a.settleReservation(reserved!, 100, 1000);
    const b = pool.share(); // a's part shrinks to 50; b waits until a drained
    expect(b.tryReserve(10)).toBeUndefined();
    const waiting = b.reserve(10);
    a.release(60, 600);
    expect((await waiting).events).toBe(10);
    expect(a.tryReserve(11)).toBeUndefined(); // a holds 40 of its part of 50
    expect(a.tryReserve(10)?.events).toBe(10);
  });

  it('gives a closed share back', () => {
    const pool = new SharedInFlight(100, 1_000_000);
    const a = pool.share();
    const b = pool.share();
    const r = a.tryReserve(50)!;
    a.settleReservation(r, 50, 500);
    a.close();
    expect(b.tryReserve(100)?.events).toBe(100);
    expect(pool.events).toBe(0);
  });
});
