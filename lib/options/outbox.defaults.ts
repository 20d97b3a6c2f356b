/** Defaults of the top-level options (relay and consumer defaults live in their own folders). */
export const OUTBOX_DEFAULTS = Object.freeze({
  /** Below Kafka's default 1 MB `message.max.bytes`, leaving room for key and headers. */
  maxPayloadBytes: 900_000,
  allowBigInt: false,
  aggregateSequence: false,
  scheduledEvents: false,
  createIndexes: true,
});

/** Largest accepted `maxPayloadBytes`: a BSON document is at most 16 MiB, envelope included. */
export const MAX_PAYLOAD_BYTES_LIMIT = 15 * 1024 * 1024;
