import { combinedTenants } from './tenants-status';

describe('combinedTenants (the tenant databases of the partitions one instance holds)', () => {
  it('is undefined without tenants', () => {
    expect(combinedTenants([undefined, undefined])).toBeUndefined();
    expect(combinedTenants([])).toBeUndefined();
  });

  it('one entry per database: followed by any, the worst stream, figures summed, the oldest age', () => {
    const combined = combinedTenants([
      [
        {
          database: 'b',
          state: 'followed',
          stream: 'following',
          inFlight: { events: 2, bytes: 20 },
          pendingCount: 3,
          oldestPendingAgeMs: 100,
        },
        { database: 'a', state: 'released', stream: 'stopped', pendingCount: 1 },
      ],
      undefined,
      [
        {
          database: 'b',
          state: 'followed',
          stream: 'draining',
          inFlight: { events: 1, bytes: 5 },
          pendingCount: 4,
          oldestPendingAgeMs: 900,
        },
        { database: 'a', state: 'released', stream: 'stopped' },
      ],
    ]);
    expect(combined).toEqual([
      { database: 'a', state: 'released', stream: 'stopped', pendingCount: 1 },
      {
        database: 'b',
        state: 'followed',
        stream: 'draining',
        inFlight: { events: 3, bytes: 25 },
        pendingCount: 7,
        oldestPendingAgeMs: 900,
      },
    ]);
  });
});
