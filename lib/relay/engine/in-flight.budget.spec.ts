import { InFlightBudget } from './in-flight.budget';

describe('InFlightBudget (the bound on what the relay holds in memory)', () => {
  it('sizes a read from the bytes room the reads already in flight leave, not from the bytes held only', () => {
    // 4 KiB at the starting estimate of 1 KiB an event: room for 4 events in all.
    const budget = new InFlightBudget(32, 4096);
    const first = budget.tryReserve(8);
    expect(first?.events).toBe(4);
    // A second read while the first is in flight finds no room left in bytes: it waits.
    expect(budget.tryReserve(8)).toBeUndefined();
    budget.settleReservation(first!, 2, 2048);
    // The first read brought 2 events of 1 KiB: room for 2 more.
    expect(budget.tryReserve(8)?.events).toBe(2);
  });

  it('still grants one event to a read when the bytes held leave less than the average', () => {
    const budget = new InFlightBudget(32, 4096);
    const first = budget.tryReserve(8)!;
    budget.settleReservation(first, 3, 3584);
    expect(budget.tryReserve(8)?.events).toBe(1);
    expect(budget.tryReserve(8)).toBeUndefined();
  });

  it('wakes a waiting read when a read in flight comes back with fewer events than it reserved', async () => {
    const budget = new InFlightBudget(32, 4096);
    const first = budget.tryReserve(8)!;
    const waiting = budget.reserve(8);
    budget.settleReservation(first, 0, 0);
    expect((await waiting).events).toBe(4);
  });
});
