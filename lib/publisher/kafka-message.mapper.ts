import type { OutboxEventRecord } from '../documents/outbox-event.document';
import { KAFKA_HEADERS } from '../documents/outbox-event.envelope';

/** The message of one event, in kafkajs' shape (`Message`). */
export interface OutboxKafkaMessage {
  key: string;
  value: string;
  headers: Record<string, string>;
}

/** `ce_source` of an event: a fixed string, a function, or (default) the aggregate type. */
export type CloudEventSource = string | ((event: OutboxEventRecord) => string);

/**
 * The Kafka message of an event: key = aggregateId, value = payload as JSON, headers = the
 * CloudEvents Kafka binding (binary mode) plus the event's own headers (trace context...).
 * Envelope headers win over user headers of the same name.
 */
export function toKafkaMessage(
  event: OutboxEventRecord,
  source?: CloudEventSource,
): OutboxKafkaMessage {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {}))
    if (typeof value === 'string') headers[name] = value;
  headers[KAFKA_HEADERS.specVersion] = '1.0';
  headers[KAFKA_HEADERS.id] = event.eventId;
  headers[KAFKA_HEADERS.type] = event.eventType;
  headers[KAFKA_HEADERS.source] =
    typeof source === 'function' ? source(event) : (source ?? event.aggregateType);
  headers[KAFKA_HEADERS.subject] = event.aggregateId;
  const occurredAt = event.occurredAt;
  headers[KAFKA_HEADERS.time] = isoTime(
    occurredAt instanceof Date ? occurredAt : new Date(occurredAt),
  );
  if (typeof event.sequence === 'number') headers[KAFKA_HEADERS.sequence] = String(event.sequence);
  if (typeof event.tenant === 'string') headers[KAFKA_HEADERS.tenant] = event.tenant;
  headers[KAFKA_HEADERS.contentType] = 'application/json';
  return { key: event.aggregateId, value: JSON.stringify(event.payload), headers };
}

/** The second `isoTime` wrote last, its `toISOString()` up to the '.', and each `.mmmZ` made. */
let lastSecond = NaN;
let secondPrefix = '';
const millis: string[] = [];

/** `date.toISOString()`, formatted once per second (events of a burst share their second). */
function isoTime(date: Date): string {
  const ms = date.getTime();
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    const iso = date.toISOString(); // a RangeError for an invalid date, as before
    lastSecond = second;
    secondPrefix = iso.slice(0, -5);
    return iso;
  }
  const milli = ms - second * 1000;
  return secondPrefix + (millis[milli] ??= `.${String(milli).padStart(3, '0')}Z`);
}
