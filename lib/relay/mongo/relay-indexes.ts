import type { mongo } from 'mongoose';
import type { RelayLogger } from '../ports/relay-logger';
import { AGGREGATE_ORDER } from '../ports/outbox-relay.store';
import type { OutboxDeadLetter, OutboxDoc } from './mongo-outbox-relay.store';

const INDEX_OPTIONS_CONFLICT = 85;
const INDEX_KEY_SPECS_CONFLICT = 86;

/**
 * The drain order of a partition's reads (`MongoOutboxRelayStore` with a slot range): slot
 * first, so one index range serves a partition's pending events, page by page.
 */
export const SLOT_DRAIN_ORDER = {
  slot: 1,
  aggregateType: 1,
  aggregateId: 1,
  ...AGGREGATE_ORDER,
} as const;

/**
 * The relay's indexes: pending events by `_id` (sweep, stats), by aggregate (catch-up, drain),
 * marked events by aggregate (start-up), the retention TTL on `publishedAt` (pending events
 * have none, so cleanup never removes them), and unique event ids of dead letters.
 *
 * With `partitions > 1`, also the partitions' slot-range reads: pending events by slot then
 * aggregate (drain pages, counts), marked events by slot then aggregate (start-up). Both are
 * partial on `status: 'pending'`, so a published event leaves them; a deployment with one
 * partition does not pay for them.
 */
export async function ensureRelayIndexes(
  outbox: mongo.Collection<OutboxDoc>,
  deadLetters: mongo.Collection<OutboxDeadLetter>,
  retentionSeconds: number,
  logger: RelayLogger,
  partitions = 1,
): Promise<void> {
  const indexes: Array<[string, () => Promise<unknown>]> = [
    [
      'outbox_relay_pending',
      () => outbox.createIndex({ status: 1, _id: 1 }, { name: 'outbox_relay_pending' }),
    ],
    [
      'outbox_relay_aggregate_order',
      () =>
        outbox.createIndex(
          { aggregateType: 1, aggregateId: 1, ...AGGREGATE_ORDER },
          { name: 'outbox_relay_aggregate_order', partialFilterExpression: { status: 'pending' } },
        ),
    ],
    [
      'outbox_relay_marked',
      () =>
        outbox.createIndex(
          { aggregateType: 1, aggregateId: 1 },
          {
            name: 'outbox_relay_marked',
            partialFilterExpression: { status: 'pending', nextAttemptAt: { $exists: true } },
          },
        ),
    ],
    ...(partitions > 1 ? slotIndexes(outbox) : []),
    ['outbox_relay_retention', () => ensureRetentionIndex(outbox, retentionSeconds)],
    [
      'outbox_dead_letter_event_id',
      () =>
        deadLetters.createIndex(
          { eventId: 1 },
          { name: 'outbox_dead_letter_event_id', unique: true },
        ),
    ],
  ];
  for (const [name, create] of indexes) {
    try {
      await create();
    } catch (error) {
      logger.error(
        `Could not create index ${name}: ${(error as Error).message}. The relay works without it, more slowly` +
          (name === 'outbox_relay_retention' ? ', and published events are not cleaned up.' : '.'),
      );
    }
  }
}

function slotIndexes(outbox: mongo.Collection<OutboxDoc>): Array<[string, () => Promise<unknown>]> {
  return [
    [
      'outbox_relay_slot_order',
      () =>
        outbox.createIndex(SLOT_DRAIN_ORDER, {
          name: 'outbox_relay_slot_order',
          partialFilterExpression: { status: 'pending' },
        }),
    ],
    [
      'outbox_relay_slot_marked',
      () =>
        outbox.createIndex(
          { slot: 1, aggregateType: 1, aggregateId: 1 },
          {
            name: 'outbox_relay_slot_marked',
            partialFilterExpression: { status: 'pending', nextAttemptAt: { $exists: true } },
          },
        ),
    ],
  ];
}

async function ensureRetentionIndex(
  outbox: mongo.Collection<OutboxDoc>,
  retentionSeconds: number,
): Promise<void> {
  try {
    await outbox.createIndex(
      { publishedAt: 1 },
      { name: 'outbox_relay_retention', expireAfterSeconds: retentionSeconds },
    );
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code !== INDEX_OPTIONS_CONFLICT && code !== INDEX_KEY_SPECS_CONFLICT) throw error;
    // The retention changed since the index was created: update it in place.
    await outbox.db.command({
      collMod: outbox.collectionName,
      index: { name: 'outbox_relay_retention', expireAfterSeconds: retentionSeconds },
    });
  }
}
