import { CONSUMER_DEAD_LETTERS_COLLECTION } from '../documents/consumer-dead-letter.document';
import { DEAD_LETTERS_COLLECTION } from '../documents/dead-letter.document';
import { OUTBOX_COLLECTION } from '../documents/outbox-event.document';
import { PROCESSED_EVENTS_COLLECTION } from '../documents/processed-event.document';
import { RELAY_STATE_COLLECTION } from '../documents/relay-state.document';
import { SEQUENCES_COLLECTION } from '../documents/sequence-counter.document';
import type { OutboxCollections } from './outbox-options.interface';

/** Default collection names (each declared with its document, in lib/documents). */
export const OUTBOX_DEFAULT_COLLECTIONS: Readonly<Required<OutboxCollections>> = Object.freeze({
  outbox: OUTBOX_COLLECTION,
  deadLetters: DEAD_LETTERS_COLLECTION,
  relayState: RELAY_STATE_COLLECTION,
  processedEvents: PROCESSED_EVENTS_COLLECTION,
  consumerDeadLetters: CONSUMER_DEAD_LETTERS_COLLECTION,
  sequences: SEQUENCES_COLLECTION,
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
