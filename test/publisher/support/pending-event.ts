import type { OutboxEventRecord } from '../../../lib/documents/outbox-event.document';

let n = 0;

/**
 * A pending outbox event for the publisher's specs: a fresh `_id` and `eventId` (`evt-<n>`) each
 * call, of `aggregateId` (default one aggregate per event) and `aggregateType` (its default topic).
 */
export function pendingEvent(aggregateId?: string, aggregateType = 'Order'): OutboxEventRecord {
  n++;
  return {
    _id: `id-${n}` as never,
    eventId: `evt-${n}`,
    eventType: 'Happened',
    aggregateType,
    aggregateId: aggregateId ?? `a${n}`,
    payload: {},
    occurredAt: new Date(0),
    status: 'pending',
    attempts: 0,
  };
}
