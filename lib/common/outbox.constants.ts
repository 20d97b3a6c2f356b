/** Injection token of the validated, defaults-merged options (`ResolvedOutboxOptions`). */
export const OUTBOX_RESOLVED_OPTIONS = Symbol('outbox:resolved_options');
/** Tokens of its slices, one per feature: each feature injects its own, none the whole. */
export const OUTBOX_STORAGE_OPTIONS = Symbol('outbox:storage_options');
export const OUTBOX_EVENTS_OPTIONS = Symbol('outbox:events_options');
export const OUTBOX_RELAY_OPTIONS = Symbol('outbox:relay_options');
export const OUTBOX_CONSUMER_OPTIONS = Symbol('outbox:consumer_options');
/** Injection token of the publisher the relay sends through (see `OutboxPublisher`). */
export const OUTBOX_PUBLISHER = Symbol('outbox:publisher');

/** Metadata keys, namespaced so they never collide with other libraries'. */
export const EMITS_EVENT_METADATA = 'outbox:emits_event';
export const TRANSACTIONAL_METADATA = 'outbox:transactional';
export const IDEMPOTENT_HANDLER_METADATA = 'outbox:idempotent_handler';
/** Key of a handler's settings in its Nest pattern extras (read by `OutboxKafkaServer`). */
export const IDEMPOTENT_HANDLER_EXTRAS = 'outbox:idempotent_handler';
