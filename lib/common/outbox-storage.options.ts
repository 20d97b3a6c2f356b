import { type OptionChecker, showOption } from './options/option.checker';
import { CONSUMER_DEAD_LETTERS_COLLECTION } from '../documents/consumer-dead-letter.document';
import { DEAD_LETTERS_COLLECTION } from '../documents/dead-letter.document';
import { OUTBOX_COLLECTION } from '../documents/outbox-event.document';
import { PROCESSED_EVENTS_COLLECTION } from '../documents/processed-event.document';
import { RELAY_STATE_COLLECTION } from '../documents/relay-state.document';
import { SEQUENCES_COLLECTION } from '../documents/sequence-counter.document';

/** Collection names used by the library. Every name can be changed; defaults below. */
export interface OutboxCollections {
  /** The outbox itself. Default `outbox`. */
  outbox?: string;
  /** Events the relay gave up on, with their error history. Default `outbox_dead_letters`. */
  deadLetters?: string;
  /** Relay checkpoints (resume tokens) and the leader lease. Default `outbox_relay_state`. */
  relayState?: string;
  /** `(consumer, eventId)` records of `@IdempotentHandler`. Default `outbox_processed_events`. */
  processedEvents?: string;
  /** Messages a consumer gave up on. Default `outbox_consumer_dead_letters`. */
  consumerDeadLetters?: string;
  /** Per-aggregate counters of `aggregateSequence`. Default `outbox_sequences`. */
  sequences?: string;
}

/**
 * The slice of the resolved options every part that reads or writes the database receives
 * (token `OUTBOX_STORAGE_OPTIONS`): its connection, its collections, whether to create indexes.
 */
export interface OutboxStorageOptions {
  connectionName?: string;
  collections: Required<OutboxCollections>;
  createIndexes: boolean;
}

/** Default collection names (each declared with its document, in lib/documents). */
export const OUTBOX_DEFAULT_COLLECTIONS: Readonly<Required<OutboxCollections>> = Object.freeze({
  outbox: OUTBOX_COLLECTION,
  deadLetters: DEAD_LETTERS_COLLECTION,
  relayState: RELAY_STATE_COLLECTION,
  processedEvents: PROCESSED_EVENTS_COLLECTION,
  consumerDeadLetters: CONSUMER_DEAD_LETTERS_COLLECTION,
  sequences: SEQUENCES_COLLECTION,
});

/** Bytes; MongoDB allows 255 for `<db>.<collection>`, leave room for the database name. */
const MAX_COLLECTION_NAME_BYTES = 120;

/** Merges the default names into `raw` (at `collections`) and checks each is a usable, distinct name. */
export function resolveCollections(
  check: OptionChecker,
  raw: unknown,
): Required<OutboxCollections> {
  const given = check.object<OutboxCollections>(
    'collections',
    raw,
    OUTBOX_DEFAULT_COLLECTIONS,
    `Pass an object with any of: ${Object.keys(OUTBOX_DEFAULT_COLLECTIONS).join(', ')}.`,
  );
  const resolved: Required<OutboxCollections> = { ...OUTBOX_DEFAULT_COLLECTIONS };
  const seen = new Map<string, string>();
  for (const key of Object.keys(resolved) as (keyof OutboxCollections)[]) {
    const name = given[key] === undefined ? resolved[key] : given[key];
    const option = `collections.${key}`;
    check.check(
      option,
      collectionNameProblem(name),
      `Use a MongoDB collection name: 1 to ${MAX_COLLECTION_NAME_BYTES} bytes, no '$' or NUL, not starting with 'system.', e.g. '${OUTBOX_DEFAULT_COLLECTIONS[key]}'.`,
    );
    const other = seen.get(name);
    if (other) {
      check.fail(
        option,
        `uses the collection '${name}', already used by collections.${other}`,
        'Give every collection option its own name.',
      );
    }
    seen.set(name, key);
    resolved[key] = name;
  }
  return resolved;
}

function collectionNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return `expected a string, got ${showOption(name)}`;
  if (name === '') return 'is empty';
  if (Buffer.byteLength(name, 'utf8') > MAX_COLLECTION_NAME_BYTES) {
    return `is longer than ${MAX_COLLECTION_NAME_BYTES} bytes`;
  }
  if (name.includes('$')) return `'${name}' contains '$'`;
  if (name.includes('\u0000')) return 'contains a NUL character';
  if (name.startsWith('system.')) return `'${name}' starts with 'system.' (reserved by MongoDB)`;
  if (name.startsWith('.') || name.endsWith('.')) return `'${name}' starts or ends with '.'`;
  return undefined;
}
