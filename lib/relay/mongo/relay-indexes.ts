import type { mongo } from 'mongoose';
import { DEAD_LETTER_EVENT_ID_INDEX } from '../../documents/dead-letter.document';
import type { OutboxDeadLetter } from '../../documents/dead-letter.document';
import { RELAY_OUTBOX_INDEXES, type OutboxDoc } from '../../documents/outbox-event.document';
import { ensureTtlIndex } from '../../documents/ttl-index';
import type { RelayLogger } from '../ports/relay-logger';

/**
 * Creates the relay's indexes (`RELAY_OUTBOX_INDEXES`, the slot ones only with `partitions > 1`,
 * so a deployment with one partition does not pay for them; and `DEAD_LETTER_EVENT_ID_INDEX`).
 * One that fails is logged: the relay works without it, more slowly.
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
  const create = (on: mongo.Collection<any>, { key, ...options }: mongo.IndexDescription) =>
    [options.name as string, () => on.createIndex(key, options)] as const;
  const indexes = [
    ...plain.map((index) => create(outbox, index)),
    ...[retention, cancelledRetention].map(
      (ttl) => [ttl.name, () => ensureTtlIndex(outbox, outbox.db, ttl, retentionSeconds)] as const,
    ),
    create(deadLetters, DEAD_LETTER_EVENT_ID_INDEX),
  ];
  for (const [name, create] of indexes) {
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
  await warnOfReplacedIndexes(outbox, logger);
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

async function warnOfReplacedIndexes(
  outbox: mongo.Collection<OutboxDoc>,
  logger: RelayLogger,
): Promise<void> {
  for (const [name, replacement] of Object.entries(REPLACED_INDEXES)) {
    const found = await outbox.indexExists(name).catch(() => false);
    if (found) {
      logger.warn(
        `Index ${name} on ${outbox.collectionName} is no longer used (${replacement} replaces it) ` +
          `and slows every write. Drop it once no relay of an earlier version runs: ` +
          `db.${outbox.collectionName}.dropIndex('${name}').`,
      );
    }
  }
}
