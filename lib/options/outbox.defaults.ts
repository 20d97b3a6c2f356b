import type { OutboxCollections } from './outbox-options.interface';

/** Default collection names. */
export const OUTBOX_DEFAULT_COLLECTIONS: Readonly<Required<OutboxCollections>> = Object.freeze({
  outbox: 'outbox',
  deadLetters: 'outbox_dead_letters',
  relayState: 'outbox_relay_state',
  processedEvents: 'outbox_processed_events',
  consumerDeadLetters: 'outbox_consumer_dead_letters',
  sequences: 'outbox_sequences',
});

/** Defaults of the top-level options (relay and consumer defaults live in their own folders). */
export const OUTBOX_DEFAULTS = Object.freeze({
  /** Below Kafka's default 1 MB `message.max.bytes`, leaving room for key and headers. */
  maxPayloadBytes: 900_000,
  allowBigInt: false,
  aggregateSequence: false,
  createIndexes: true,
});

/** Largest accepted `maxPayloadBytes`: a BSON document is at most 16 MiB, envelope included. */
export const MAX_PAYLOAD_BYTES_LIMIT = 15 * 1024 * 1024;
