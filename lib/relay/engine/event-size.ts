import type { OutboxEventRecord } from '../../documents/outbox-event.document';

/** Rough wire size of an event for a publisher that does not say (`sizeOf`): key, JSON payload, headers. */
export function eventSize(event: OutboxEventRecord): number {
  let size = 64 + event.aggregateId.length + event.eventType.length + event.aggregateType.length;
  size += Buffer.byteLength(JSON.stringify(event.payload ?? null));
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    size += name.length + String(value).length;
  }
  return size;
}
