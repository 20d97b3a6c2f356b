import type { OutboxReadCollections } from '../../operations/read/outbox-read.collections';
import { cappedCount, type CappedCount } from './capped-count';

export interface ConsumerView {
  consumer: string;
  /** Events applied and still recorded (records expire after `processedRetentionSeconds`). */
  applied: CappedCount;
  /** Events failing now (being retried). */
  failing: number;
  deadLettered: number;
}

/**
 * Per consumer: its `(consumer, eventId)` records counted on `consumer_1_eventId_1`, and its
 * failing and dead-lettered messages grouped from `status_1_deadLetteredAt_1` (at most `limit`
 * of them read). Consumers are those of this app, of the `consumers` option, and any with
 * failures.
 */
export async function readConsumers(
  collections: OutboxReadCollections,
  names: readonly string[],
  limit: number,
): Promise<ConsumerView[]> {
  const grouped = await collections.consumerDeadLetters
    .aggregate<{ _id: { consumer: string; status: string }; n: number }>([
      { $match: { status: { $in: ['failing', 'dead'] } } },
      { $limit: limit },
      { $group: { _id: { consumer: '$consumer', status: '$status' }, n: { $sum: 1 } } },
    ])
    .toArray();
  const all = new Set(names);
  for (const g of grouped) all.add(g._id.consumer);
  const counts = (consumer: string, status: string) =>
    grouped.find((g) => g._id.consumer === consumer && g._id.status === status)?.n ?? 0;
  return Promise.all(
    [...all].sort().map(async (consumer) => ({
      consumer,
      applied: await cappedCount(collections.processedEvents, { consumer }, limit),
      failing: counts(consumer, 'failing'),
      deadLettered: counts(consumer, 'dead'),
    })),
  );
}
