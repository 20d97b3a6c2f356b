import type { mongo } from 'mongoose';

export const PROCESSED_EVENTS_COLLECTION = 'outbox_processed_events'; // the option's default

/** One `(consumer, eventId)` an `@IdempotentHandler` applied. Expires `processedRetentionSeconds` after `processedAt`. */
export interface ProcessedEventDocument {
  consumer: string;
  eventId: string;
  processedAt: Date;
}

/** The unique index the dedupe relies on. */
export const PROCESSED_UNIQUE_INDEX = {
  key: { consumer: 1, eventId: 1 },
  name: 'consumer_1_eventId_1',
  unique: true,
} as const satisfies mongo.IndexDescription;

/** The TTL that bounds the collection (`expireAfterSeconds`: `processedRetentionSeconds`). */
export const PROCESSED_TTL_INDEX = { key: { processedAt: 1 }, name: 'processedAt_ttl' } as const;
