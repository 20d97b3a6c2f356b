import { canAcquire, LeaseTracker } from './lease.tracker';

describe('LeaseTracker (one active relay, fencing)', () => {
  it('is leader only while the lease is valid, with a safety margin', () => {
    const lease = new LeaseTracker('me', 15_000, 5_000);
    expect(lease.isLeader(0)).toBe(false);
    lease.acquired({ owner: 'me', fencing: 3, expiresAt: new Date(15_000) }, 0);
    expect(lease.fencing).toBe(3);
    expect(lease.isLeader(13_000)).toBe(true);
    expect(lease.isLeader(13_400)).toBe(false); // within renewMs/3 of expiry: stop early
    expect(lease.shouldRenew(4_999)).toBe(false);
    expect(lease.shouldRenew(5_000)).toBe(true);
    lease.renewed(new Date(20_000), 5_000);
    expect(lease.isLeader(18_000)).toBe(true);
    lease.lost();
    expect(lease.isLeader(18_000)).toBe(false);
    expect(lease.fencing).toBeUndefined();
  });

  it('lets another instance acquire only a free, expired or own lease', () => {
    const held = { owner: 'a', fencing: 1, expiresAt: new Date(10_000) };
    expect(canAcquire(undefined, 'b', 0)).toBe(true);
    expect(canAcquire(held, 'b', 9_999)).toBe(false);
    expect(canAcquire(held, 'b', 10_000)).toBe(true);
    expect(canAcquire(held, 'a', 5_000)).toBe(true);
  });
});
