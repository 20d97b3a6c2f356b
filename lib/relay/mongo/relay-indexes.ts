import type { mongo } from 'mongoose';
import { DEAD_LETTER_EVENT_ID_INDEX } from '../../documents/dead-letter.document';
import type { OutboxDeadLetter } from '../../documents/dead-letter.document';
import { RELAY_OUTBOX_INDEXES } from '../../documents/outbox-event.document';
import type { OutboxDoc } from '../../documents/outbox-event.document';
import type { RelayLogger } from '../ports/relay-logger';

const INDEX_OPTIONS_CONFLICT = 85;
const INDEX_KEY_SPECS_CONFLICT = 86;

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
  const { pending, aggregateOrder, marked, slotOrder, slotMarked, retention } =
    RELAY_OUTBOX_INDEXES;
  const indexes: Array<[string, () => Promise<unknown>]> = [
    ...[pending, aggregateOrder, marked, ...(partitions > 1 ? [slotOrder, slotMarked] : [])].map(
      ({ key, ...options }): [string, () => Promise<unknown>] => [
        options.name,
        () => outbox.createIndex(key, options),
      ],
    ),
    [retention.name, () => ensureRetentionIndex(outbox, retentionSeconds)],
    [
      DEAD_LETTER_EVENT_ID_INDEX.name,
      () => {
        const { key, ...options } = DEAD_LETTER_EVENT_ID_INDEX;
        return deadLetters.createIndex(key, options);
      },
    ],
  ];
  for (const [name, create] of indexes) {
    try {
      await create();
    } catch (error) {
      logger.error(
        `Could not create index ${name}: ${(error as Error).message}. The relay works without it, more slowly` +
          (name === retention.name ? ', and published events are not cleaned up.' : '.'),
      );
    }
  }
}

async function ensureRetentionIndex(
  outbox: mongo.Collection<OutboxDoc>,
  retentionSeconds: number,
): Promise<void> {
  const { key, name } = RELAY_OUTBOX_INDEXES.retention;
  try {
    await outbox.createIndex(key, { name, expireAfterSeconds: retentionSeconds });
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code !== INDEX_OPTIONS_CONFLICT && code !== INDEX_KEY_SPECS_CONFLICT) throw error;
    // The retention changed since the index was created: update it in place.
    await outbox.db.command({
      collMod: outbox.collectionName,
      index: { name, expireAfterSeconds: retentionSeconds },
    });
  }
}
