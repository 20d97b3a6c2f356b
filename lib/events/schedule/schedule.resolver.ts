import { Types } from 'mongoose';
import { OutboxError } from '../../common/errors/outbox.error';
import { aggregateKey, type AggregateRef } from '../../documents/outbox-event.document';
import type { NewOutboxEvent } from '../../documents/outbox-event.document';
import type { ScheduleRequest } from './emit-schedule';
import { idAfter } from './id-after';

/** An event emitted in a transaction attempt, with its schedule, until the attempt writes it. */
export interface BufferedEvent {
  row: NewOutboxEvent;
  schedule: ScheduleRequest;
  /** With tenants: the database of the row's tenant (resolved at emit time). */
  database?: string;
}

/** What a transaction must read before writing its events (see `scheduleQueryOf`). */
export interface ScheduleQuery {
  /** Aggregates with an event that waits for their pending scheduled events. */
  aggregates: AggregateRef[];
  /** The server's time is needed (an event with `delayMs`). */
  needsNow: boolean;
}

/** The answer: the server's time and, per aggregate, the latest pending `availableAt`. */
export interface ScheduleSnapshot {
  now?: Date;
  /** By `aggregateKey()`; aggregates without pending scheduled events are absent. */
  latest: ReadonlyMap<string, Date>;
  /** By `aggregateKey()`: the greatest `_id` of those pending scheduled events. */
  lastIds?: ReadonlyMap<string, unknown>;
}

/** The read a transaction needs before writing `entries`, or undefined when it needs none. */
export function scheduleQueryOf(entries: readonly BufferedEvent[]): ScheduleQuery | undefined {
  const aggregates = new Map<string, AggregateRef>();
  let needsNow = false;
  for (const { row, schedule } of entries) {
    if (schedule.delayMs !== undefined) needsNow = true;
    if (schedule.wait) {
      const { aggregateType, aggregateId } = row;
      aggregates.set(aggregateKey(row), { aggregateType, aggregateId });
    }
  }
  if (aggregates.size === 0 && !needsNow) return undefined;
  return { aggregates: [...aggregates.values()], needsNow };
}

/**
 * The rows to insert, with `availableAt` set (in emit order):
 * own = `availableAt`, or server time + `delayMs`; an event that waits gets
 * `max(own, latest pending availableAt of its aggregate)`, where the latest counts the events
 * written before it in the same transaction too (those that do not wait included), and an `_id`
 * after theirs (`idAfter`): the relay reads an aggregate by `sequence`, then `_id`, and without
 * `aggregateSequence` the `_id` alone orders it.
 */
export function applySchedules(
  entries: readonly BufferedEvent[],
  snapshot: ScheduleSnapshot,
): NewOutboxEvent[] {
  const latest = new Map(snapshot.latest);
  const lastIds = new Map(snapshot.lastIds);
  return entries.map(({ row, schedule }) => {
    const key = aggregateKey(row);
    const own =
      schedule.delayMs !== undefined
        ? serverNow(snapshot).getTime() + schedule.delayMs
        : schedule.availableAt?.getTime();
    const inherited = schedule.wait ? latest.get(key)?.getTime() : undefined;
    const at = Math.max(own ?? -Infinity, inherited ?? -Infinity);
    if (at === -Infinity) return row;
    const availableAt = new Date(at);
    if (at > (latest.get(key)?.getTime() ?? -Infinity)) latest.set(key, availableAt);
    const last = lastIds.get(key);
    if (!schedule.wait || !(last instanceof Types.ObjectId)) return { ...row, availableAt };
    const _id = idAfter(last);
    lastIds.set(key, _id);
    return { ...row, availableAt, _id } as NewOutboxEvent;
  });
}

function serverNow(snapshot: ScheduleSnapshot): Date {
  if (!(snapshot.now instanceof Date) || Number.isNaN(snapshot.now.getTime())) {
    throw new OutboxError(
      'The MongoDB server did not return its time ($$NOW), which delayMs is counted from.' +
        ' Use a MongoDB server of version 4.2 or later, or give availableAt instead of delayMs.',
      'OUTBOX_SERVER_TIME_UNAVAILABLE',
    );
  }
  return new Date(snapshot.now.getTime());
}
