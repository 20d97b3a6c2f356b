import { MetricsRing, publishRate } from './metrics-ring';

describe('the metrics ring', () => {
  it('keeps the last samples in order, bounded', () => {
    const ring = new MetricsRing(3);
    for (let i = 1; i <= 5; i++) ring.push({ at: i * 1000, published: i * 10 });
    expect(ring.since(0).map((s) => s.at)).toEqual([3000, 4000, 5000]);
    expect(ring.since(4000).map((s) => s.at)).toEqual([4000, 5000]);
  });

  it('derives published per second, a counter reset as 0', () => {
    expect(
      publishRate([
        { at: 0, published: 0 },
        { at: 2000, published: 10 },
        { at: 4000, published: 4 },
      ]),
    ).toEqual([
      { t: 2000, v: 5 },
      { t: 4000, v: 0 },
    ]);
  });
});
