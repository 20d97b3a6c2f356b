import { OutboxRelayMetrics } from '../relay.metrics';

const COUNTERS = new Set<string | symbol>([
  'published',
  'retried',
  'deadLettered',
  'recoveries',
  'outages',
]);

/**
 * The metrics one partition's relay writes: counters go to the instance's metrics as well
 * (by the increment), gauges (pending count, oldest age, leader) stay the partition's own and
 * the partitioned node sums them up (`aggregateGauges`); the last checkpoint time (and the
 * server clock it is on) goes to the instance too.
 */
export function partitionMetrics(shared: OutboxRelayMetrics): OutboxRelayMetrics {
  const own = new OutboxRelayMetrics();
  return new Proxy(own, {
    set(target, key, value: unknown) {
      const record = target as unknown as Record<string | symbol, unknown>;
      const totals = shared as unknown as Record<string | symbol, unknown>;
      if (COUNTERS.has(key) && typeof value === 'number') {
        totals[key] = (totals[key] as number) + value - ((record[key] as number) ?? 0);
      } else if (key === 'lastCheckpointAt' && typeof value === 'number') {
        totals[key] = Math.max((totals[key] as number | undefined) ?? 0, value);
      } else if (key === 'serverNow') {
        totals[key] = value; // the latest partition relay's estimate of the same server clock
      }
      record[key] = value;
      return true;
    },
  });
}

/**
 * Sets the instance's gauges from its partitions': sums of the counts, the oldest ages, the
 * earliest next due time, leader of any.
 */
export function aggregateGauges(
  shared: OutboxRelayMetrics,
  partitions: readonly OutboxRelayMetrics[],
): void {
  const known = (gauge: (metrics: OutboxRelayMetrics) => number | undefined) =>
    partitions.map(gauge).filter((n): n is number => n !== undefined);
  const sum = (values: number[]) =>
    values.length > 0 ? values.reduce((a, b) => a + b, 0) : undefined;
  const max = (values: number[]) => (values.length > 0 ? Math.max(...values) : undefined);
  shared.pendingCount = sum(known((m) => m.pendingCount));
  shared.oldestPendingAgeMs = max(known((m) => m.oldestPendingAgeMs));
  shared.leader = partitions.some((m) => m.leader);
  shared.scheduledCount = sum(known((m) => m.scheduledCount));
  const due = known((m) => m.nextDueAt);
  shared.nextDueAt = due.length > 0 ? Math.min(...due) : undefined;
  shared.oldestOverdueAgeMs = max(known((m) => m.oldestOverdueAgeMs));
}
