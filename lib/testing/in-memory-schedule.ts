import type { NewOutboxEvent } from '../documents/outbox-event.document';
import { cancelResultOf } from '../events/schedule/cancel-result';
import type { CancelScheduledResult } from '../events/schedule/cancel-result';
import { aggregateKey } from '../documents/outbox-event.document';
import type { ScheduleQuery, ScheduleSnapshot } from '../events/schedule/schedule.resolver';

/**
 * The write side's schedule read over committed rows in memory (what `readScheduleSnapshot`
 * reads from MongoDB), at the time `now`.
 */
export function scheduleSnapshotOf(
  rows: readonly NewOutboxEvent[],
  query: ScheduleQuery,
  now: Date,
): ScheduleSnapshot {
  const wanted = new Set(query.aggregates.map(aggregateKey));
  const latest = new Map<string, Date>();
  for (const row of rows) {
    const key = aggregateKey(row);
    if (row.status !== 'pending' || !row.availableAt || !wanted.has(key)) continue;
    const current = latest.get(key);
    if (!current || row.availableAt > current) latest.set(key, row.availableAt);
  }
  return { now: new Date(now.getTime()), latest };
}

/**
 * `cancelScheduledEvent` over committed rows in memory: the result now; the row changes once the
 * cancelling transaction (`session`) commits.
 */
export function cancelInMemory(
  rows: readonly NewOutboxEvent[],
  eventId: string,
  now: Date,
  session: { onCommit(hook: () => void): void },
): CancelScheduledResult {
  const row = rows.find((candidate) => candidate.eventId === eventId);
  if (row?.status !== 'pending' || !row.availableAt || !(row.availableAt > now))
    return cancelResultOf(eventId, row);
  const { availableAt } = row;
  const cancelledAt = new Date(now.getTime());
  session.onCommit(() => {
    row.status = 'cancelled';
    row.cancelledAt = cancelledAt;
  });
  return { outcome: 'cancelled', eventId, availableAt, cancelledAt, alreadyCancelled: false };
}
