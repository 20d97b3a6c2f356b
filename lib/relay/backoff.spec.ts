import { backoffDelay } from './backoff';

describe('backoffDelay (exponential, capped, jittered)', () => {
  const options = { initialMs: 100, maxMs: 1000, jitter: 0.2 };
  it('doubles per attempt up to maxMs', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 5, 10].map((n) => backoffDelay(n, options, mid))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
  });
  it('spreads by +/- jitter and never exceeds maxMs', () => {
    expect(backoffDelay(1, options, () => 0)).toBe(80);
    expect(backoffDelay(1, options, () => 1)).toBe(120);
    expect(backoffDelay(10, options, () => 1)).toBe(1000);
  });
});
