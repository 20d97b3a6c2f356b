import { eventMemoryBytes } from './event-memory';
import { InFlightBudget } from './in-flight.budget';

describe('InFlightBudget (the bound on what the relay holds in memory)', () => {
  /** The starting estimate: what an event of 1 KiB on the wire costs in memory. */
  const one = eventMemoryBytes(1024);

  it('sizes a read from the bytes room the reads already in flight leave, not from the bytes held only', () => {
    // Room for 4 events at the starting estimate.
    const budget = new InFlightBudget(32, 4 * one);
    const first = budget.tryReserve(8);
    expect(first?.events).toBe(4);
    // A second read while the first is in flight finds no room left in bytes: it waits.
    expect(budget.tryReserve(8)).toBeUndefined();
    budget.settleReservation(first!, 2, 2 * one);
    // The first read brought 2 events of the estimate: room for 2 more.
    expect(budget.tryReserve(8)?.events).toBe(2);
  });

  it('still grants one event to a read when the bytes held leave less than the average', () => {
    const budget = new InFlightBudget(32, 4 * one);
    const first = budget.tryReserve(8)!;
    budget.settleReservation(first, 3, 3.5 * one);
    expect(budget.tryReserve(8)?.events).toBe(1);
    expect(budget.tryReserve(8)).toBeUndefined();
  });

  it('wakes a waiting read when a read in flight comes back with fewer events than it reserved', async () => {
    const budget = new InFlightBudget(32, 4 * one);
    const first = budget.tryReserve(8)!;
    const waiting = budget.reserve(8);
    budget.settleReservation(first, 0, 0);
    expect((await waiting).events).toBe(4);
  });
});

describe('InFlightBudget.reserveIdle (a read that will most likely only wait: the idle change stream)', () => {
  const flush = () => new Promise((resolve) => setImmediate(resolve));

  it('lets a read asked right after room was freed go first (the next page of a lane that just published)', async () => {
    // Defect: the idle stream took the one event of room after each page, and a catch-up read
    // got one page per idle time (maxInFlight 1).
    const budget = new InFlightBudget(1, 1_000_000);
    const page = budget.tryReserve(1)!;
    budget.settleReservation(page, 1, 100);
    let idle: number | undefined;
    void budget.reserveIdle(1).then((reservation) => (idle = reservation.events));
    budget.release(1, 100);
    const next = budget.tryReserve(1);
    expect(next?.events).toBe(1);
    await flush();
    expect(idle).toBeUndefined();
    budget.settleReservation(next!, 0, 0);
    await flush();
    expect(idle).toBe(1);
  });

  it('is granted at once when there is room', async () => {
    const budget = new InFlightBudget(4, 1_000_000);
    expect((await budget.reserveIdle(1)).events).toBe(1);
  });

  it('waits in line as any read once 16 reads went before it', async () => {
    const budget = new InFlightBudget(1, 1_000_000);
    let held = budget.tryReserve(1)!;
    let idle: number | undefined;
    void budget.reserveIdle(1).then((reservation) => (idle = reservation.events));
    for (let i = 0; i < 16; i++) {
      budget.settleReservation(held, 0, 0);
      const next = budget.tryReserve(1);
      expect(next).toBeDefined();
      held = next!;
    }
    // Its turn now: the next read waits behind it.
    expect(budget.tryReserve(1)).toBeUndefined();
    budget.settleReservation(held, 0, 0);
    await flush();
    expect(idle).toBe(1);
  });

  it('resolves empty when the budget closes', async () => {
    const budget = new InFlightBudget(1, 1_000_000);
    budget.tryReserve(1);
    const idle = budget.reserveIdle(1);
    budget.close();
    expect((await idle).events).toBe(0);
  });

  it('an idle read takes at most half the events, so that a page of another read fits beside it', () => {
    expect(new InFlightBudget(50, 1_000_000).idleSize(5)).toBe(5);
    expect(new InFlightBudget(50, 1_000_000).pageBesideIdle(5)).toBe(5);
    // maxInFlight = batchSize: the stream's idle read and a catch-up page share it.
    expect(new InFlightBudget(14, 1_000_000).idleSize(14)).toBe(7);
    expect(new InFlightBudget(14, 1_000_000).pageBesideIdle(14)).toBe(7);
    expect(new InFlightBudget(1, 1_000_000).idleSize(1)).toBe(1);
    expect(new InFlightBudget(1, 1_000_000).pageBesideIdle(1)).toBe(1);
  });
});
