/** What a domain event says, as the application emits it. */
export interface OutboxEventInput {
  /** e.g. `OrderCreated`. See `lib/events/event.validator.ts` for the allowed characters. */
  eventType: string;
  /** e.g. `Order`. Becomes part of the default topic name. */
  aggregateType: string;
  /** e.g. the order id. The Kafka key: one aggregate, one partition, commit order. */
  aggregateId: string;
  /** A plain JSON-compatible object; stored as a BSON document, sent as JSON. */
  payload: Record<string, unknown>;
  /** Extra string headers (e.g. W3C `traceparent`) sent with the message. */
  headers?: Record<string, string>;
}

/**
 * Kafka header names carrying the envelope (CloudEvents Kafka binding, binary mode),
 * shared by the relay (writes them) and `@IdempotentHandler` (reads them).
 */
export const KAFKA_HEADERS = {
  specVersion: 'ce_specversion',
  id: 'ce_id',
  type: 'ce_type',
  source: 'ce_source',
  subject: 'ce_subject',
  time: 'ce_time',
  /** CloudEvents sequence extension: the event's per-aggregate `sequence`, when stamped. */
  sequence: 'ce_sequence',
  /** CloudEvents extension: the event's tenant (its outbox document's `tenant`), with tenants. */
  tenant: 'ce_tenant',
  contentType: 'content-type',
  traceparent: 'traceparent',
  tracestate: 'tracestate',
} as const;
