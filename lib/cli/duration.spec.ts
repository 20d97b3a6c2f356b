import { duration } from './duration';

describe('duration', () => {
  it.each([
    [0, '0s'],
    [400, '0s'],
    [45_000, '45s'],
    [180_000, '3m0s'],
    [2 * 3_600_000 + 5 * 60_000 + 9_000, '2h5m'],
    [3 * 86_400_000 + 3_600_000, '3d1h'],
    [-5_000, '0s'],
  ])('%d ms is %s', (ms, text) => {
    expect(duration(ms)).toBe(text);
  });
});
