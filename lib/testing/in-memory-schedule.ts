import type { NewOutboxEvent } from '../documents/outbox-event.document';
import { cancelResultOf } from '../events/schedule/cancel-result';
import type { CancelScheduledResult, CancelView } from '../events/schedule/cancel-result';
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
 * cancelling transaction (`session`) commits. Until then that transaction sees its own cancel, as
 * a MongoDB session sees its own writes: a second cancel of the event in it finds it cancelled
 * (`ownCancels`, the attempt's).
 */
export function cancelInMemory(
  rows: readonly NewOutboxEvent[],
  eventId: string,
  now: Date,
  session: { onCommit(hook: () => void): void; ownCancels: Map<string, CancelView> },
): CancelScheduledResult {
  const earlier = session.ownCancels.get(eventId);
  if (earlier) return cancelResultOf(eventId, earlier);
  const row = rows.find((candidate) => candidate.eventId === eventId);
  if (row?.status !== 'pending' || !row.availableAt || !(row.availableAt > now))
    return cancelResultOf(eventId, row);
  const cancelled: CancelView = {
    status: 'cancelled',
    availableAt: row.availableAt,
    cancelledAt: new Date(now.getTime()),
  };
  session.ownCancels.set(eventId, cancelled);
  session.onCommit(() => Object.assign(row, cancelled));
  return cancelResultOf(eventId, cancelled, true);
}
