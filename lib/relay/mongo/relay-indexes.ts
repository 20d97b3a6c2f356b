import { isDeepStrictEqual } from 'node:util';
import type { mongo } from 'mongoose';
import { DEAD_LETTER_EVENT_ID_INDEX } from '../../documents/dead-letter.document';
import type { OutboxDeadLetter } from '../../documents/dead-letter.document';
import { RELAY_OUTBOX_INDEXES, type OutboxDoc } from '../../documents/outbox-event.document';
import { ensureTtlIndex } from '../../documents/ttl-index';
import type { RelayLogger } from '../ports/relay-logger';

/**
 * Creates the relay's indexes (`RELAY_OUTBOX_INDEXES`, the slot ones only with `partitions > 1`,
 * so a deployment with one partition does not pay for them; and `DEAD_LETTER_EVENT_ID_INDEX`).
 * One that fails is logged: the relay works without it, more slowly. Each collection's indexes
 * are listed first, and one already there as asked (`sameIndex`) is not asked for again: with
 * every index there, two listings a database instead of thirteen commands on a server that lists
 * a key's fields as created (mongod; PoppyDB reorders them, so there the indexes of several
 * fields are asked for again). A relay over many tenant databases prepares each at start.
 */
export async function ensureRelayIndexes(
  outbox: mongo.Collection<OutboxDoc>,
  deadLetters: mongo.Collection<OutboxDeadLetter>,
  retentionSeconds: number,
  logger: RelayLogger,
  partitions = 1,
): Promise<void> {
  const { slotOrder, slotMarked, slotScheduled, retention, cancelledRetention, ...always } =
    RELAY_OUTBOX_INDEXES;
  const bySlot = partitions > 1 ? [slotOrder, slotMarked, slotScheduled] : [];
  const plain = [...Object.values(always), ...bySlot];
  const [onOutbox, onDeadLetters] = [await indexesOf(outbox), await indexesOf(deadLetters)];
  const create = (
    on: mongo.Collection<any>,
    present: ReadonlyMap<string, mongo.Document>,
    { key, ...options }: mongo.IndexDescription,
  ) =>
    [
      options.name as string,
      sameIndex(present.get(options.name as string), { key, ...options })
        ? undefined
        : () => on.createIndex(key, options),
    ] as const;
  const ttl = (index: { key: Record<string, 1>; name: string }) =>
    [
      index.name,
      sameIndex(onOutbox.get(index.name), { ...index, expireAfterSeconds: retentionSeconds })
        ? undefined
        : () => ensureTtlIndex(outbox, outbox.db, index, retentionSeconds),
    ] as const;
  const indexes = [
    ...plain.map((index) => create(outbox, onOutbox, index)),
    ...[retention, cancelledRetention].map(ttl),
    create(deadLetters, onDeadLetters, DEAD_LETTER_EVENT_ID_INDEX),
  ];
  for (const [name, create] of indexes) {
    if (!create) continue;
    try {
      await create();
    } catch (error) {
      logger.error(
        `Could not create index ${name}: ${(error as Error).message}. The relay works without it, more slowly` +
          (name === retention.name
            ? ', and published events are not cleaned up.'
            : name === cancelledRetention.name
              ? ', and cancelled events are not cleaned up.'
              : '.'),
      );
    }
  }
  warnOfReplacedIndexes(outbox.collectionName, onOutbox, logger);
}

/** The options that make two indexes with the same name and key differ (`createIndex` refuses). */
const SPEC_OPTIONS = ['unique', 'sparse', 'partialFilterExpression', 'expireAfterSeconds'];

/**
 * Whether `existing` (as `listIndexes` gives it) is `wanted`: the same key, in the same order
 * (order is part of an index), and the same options that change what it holds.
 */
export function sameIndex(
  existing: mongo.Document | undefined,
  wanted: mongo.IndexDescription,
): boolean {
  if (!existing) return false;
  const keyOf = (key: unknown) => JSON.stringify(Object.entries(key as object));
  if (keyOf(existing.key) !== keyOf(wanted.key)) return false;
  const options = wanted as unknown as Record<string, unknown>;
  return SPEC_OPTIONS.every((option) => isDeepStrictEqual(existing[option], options[option]));
}

/** `collection`'s indexes by name; none when it cannot be listed (every index is then created). */
async function indexesOf(collection: mongo.Collection<any>): Promise<Map<string, mongo.Document>> {
  try {
    const listed = await collection.listIndexes().toArray();
    return new Map(listed.map((index) => [String(index.name), index]));
  } catch {
    return new Map(); // not created yet (NamespaceNotFound), or not allowed: created as before
  }
}

/**
 * Indexes of earlier versions that this one no longer reads, by the name of their replacement.
 * They cost every write until dropped; a relay does not drop them itself, since relays of the
 * earlier version may still be running in a rolling deploy (docs/operations.md, "Upgrading").
 */
const REPLACED_INDEXES = {
  outbox_relay_pending: RELAY_OUTBOX_INDEXES.statusDue.name,
  outbox_relay_scheduled: RELAY_OUTBOX_INDEXES.scheduled.name,
  outbox_relay_slot_scheduled: RELAY_OUTBOX_INDEXES.slotScheduled.name,
};

function warnOfReplacedIndexes(
  collectionName: string,
  present: ReadonlyMap<string, unknown>,
  logger: RelayLogger,
): void {
  for (const [name, replacement] of Object.entries(REPLACED_INDEXES)) {
    if (present.has(name)) {
      logger.warn(
        `Index ${name} on ${collectionName} is no longer used (${replacement} replaces it) ` +
          `and slows every write. Drop it once no relay of an earlier version runs: ` +
          `db.${collectionName}.dropIndex('${name}').`,
      );
    }
  }
}
