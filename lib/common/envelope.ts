import type { Types } from 'mongoose';

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

/** Lifecycle of one outbox document. `pending` documents are never removed by cleanup. */
export type OutboxEventStatus = 'pending' | 'published';

/** One document of the outbox collection: the envelope plus what the relay needs. */
export interface OutboxEventRecord extends OutboxEventInput {
  _id: Types.ObjectId;
  /** Unique, time-ordered (UUIDv7). The dedupe key of consumers. */
  eventId: string;
  occurredAt: Date;
  status: OutboxEventStatus;
  /**
   * Position of the event in its aggregate (1, 2, 3, ...), in commit order; only with the
   * `aggregateSequence` option. Sent as the `ce_sequence` header.
   */
  sequence?: number;
  /**
   * `eventSlot(aggregateType, aggregateId)` (0..4095), stamped at emit time: relay partitions
   * are slot ranges. Missing on events written before slots existed.
   */
  slot?: number;
  /** Publish attempts so far (relay). */
  attempts: number;
  /** Earliest time of the next attempt after a failure (relay backoff). */
  nextAttemptAt?: Date;
  /** Last publish error (relay). */
  lastError?: string;
  /** Set when the broker acknowledged; the retention TTL index counts from here. */
  publishedAt?: Date;
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
  contentType: 'content-type',
  traceparent: 'traceparent',
  tracestate: 'tracestate',
} as const;
