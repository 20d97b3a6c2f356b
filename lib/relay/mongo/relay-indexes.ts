import type { mongo } from 'mongoose';
import type { RelayLogger } from '../ports/relay-logger';
import { AGGREGATE_ORDER } from '../ports/outbox-relay.store';
import type { OutboxDeadLetter, OutboxDoc } from './mongo-outbox-relay.store';

const INDEX_OPTIONS_CONFLICT = 85;
const INDEX_KEY_SPECS_CONFLICT = 86;

/**
 * The relay's indexes: pending events by `_id` (sweep, stats), by aggregate (catch-up, drain),
 * marked events by aggregate (start-up), the retention TTL on `publishedAt` (pending events
 * have none, so cleanup never removes them), and unique event ids of dead letters.
 */
export async function ensureRelayIndexes(
  outbox: mongo.Collection<OutboxDoc>,
  deadLetters: mongo.Collection<OutboxDeadLetter>,
  retentionSeconds: number,
  logger: RelayLogger,
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
