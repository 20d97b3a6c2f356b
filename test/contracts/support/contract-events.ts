import { randomBytes } from 'node:crypto';
import { Types } from 'mongoose';
import type { OutboxEventRecord } from '../../../lib/documents/outbox-event.document';
import { eventSlot } from '../../../lib/events/event-slot';

/** A fixed time the events occurred at (stores never compare it with a clock). */
export const CONTRACT_EPOCH = new Date('2030-01-01T00:00:00Z');

let counter = 0;
const run = randomBytes(3).toString('hex');

/** An outbox event as the write side inserts it (pending, slot stamped, ascending `_id`). */
export function contractEvent(
  aggregateId: string,
  extra: Partial<OutboxEventRecord> = {},
): OutboxEventRecord {
  counter++;
  const aggregateType = extra.aggregateType ?? 'Order';
  return {
    _id: new Types.ObjectId(),
    eventId: `contract-${run}-${counter}`,
    eventType: 'Created',
    aggregateType,
    aggregateId,
    payload: { n: counter },
    headers: { traceparent: `00-${'0'.repeat(31)}${counter % 10}-${'0'.repeat(15)}1-01` },
    occurredAt: CONTRACT_EPOCH,
    status: 'pending',
    attempts: 0,
    slot: eventSlot(aggregateType, aggregateId),
    ...extra,
  };
}

/** `ms` after `CONTRACT_EPOCH`. */
export function at(ms: number): Date {
  return new Date(CONTRACT_EPOCH.getTime() + ms);
}

export const ids = (events: ReadonlyArray<{ _id: unknown }>): string[] =>
  events.map((event) => String(event._id));
