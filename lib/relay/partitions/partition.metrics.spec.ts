import { OutboxRelayMetrics } from '../relay.metrics';
import { aggregateGauges, partitionMetrics } from './partition.metrics';

describe('partition metrics', () => {
  it('adds every partition counter to the instance, keeps gauges apart and sums them on demand', () => {
    const shared = new OutboxRelayMetrics();
    const a = partitionMetrics(shared);
    const b = partitionMetrics(shared);
    a.published += 3;
    b.published += 2;
    b.deadLettered++;
    a.pendingCount = 4;
    a.oldestPendingAgeMs = 100;
    b.pendingCount = 1;
    b.oldestPendingAgeMs = 900;
    b.leader = true;
    expect(shared.published).toBe(5);
    expect(shared.deadLettered).toBe(1);
    expect(shared.pendingCount).toBeUndefined();
    aggregateGauges(shared, [a, b]);
    expect(shared.snapshot()).toMatchObject({
      pendingCount: 5,
      oldestPendingAgeMs: 900,
      leader: true,
    });
    expect(a.published).toBe(3);
  });
});
