import { PUBLISHABLE_NOW } from '../../documents/outbox-event.document';
import type { OutboxReadCollections } from '../../operations/read/outbox-read.collections';
import { cappedCount, type CappedCount } from './capped-count';

export interface OutboxBacklog {
  pending: CappedCount;
  /** Age of the oldest pending (not scheduled) event, by its `occurredAt`, ms. */
  oldestPendingAgeMs?: number;
  oldestPendingEventId?: string;
  scheduled: CappedCount;
  /** Scheduled events due by now (this process's clock) and not yet published. */
  overdue: CappedCount;
  nextDueAt?: Date;
}

const SCHEDULED = { status: 'pending', availableAt: { $exists: true } } as const;

/**
 * The outbox's backlog, each read on a relay index:
 * pending count and oldest pending on `outbox_relay_status_due` (`{ status, availableAt, _id }`,
 * the relay's own sweep reads); scheduled and overdue counts and the next due time on the partial
 * `outbox_relay_scheduled` (`{ availableAt, _id }`). Counts stop at `limit`.
 */
export async function readBacklog(
  collections: OutboxReadCollections,
  limit: number,
  now = new Date(),
): Promise<OutboxBacklog> {
  const outbox = collections.outbox;
  const [pending, oldest, scheduled, overdue, next] = await Promise.all([
    cappedCount(outbox, PUBLISHABLE_NOW, limit),
    outbox.findOne(PUBLISHABLE_NOW, {
      sort: { _id: 1 },
      projection: { _id: 0, eventId: 1, occurredAt: 1 },
    }),
    cappedCount(outbox, SCHEDULED, limit),
    cappedCount(outbox, { ...SCHEDULED, availableAt: { $exists: true, $lte: now } }, limit),
    outbox.findOne(
      { ...SCHEDULED, availableAt: { $exists: true, $gt: now } },
      { sort: { availableAt: 1, _id: 1 }, projection: { _id: 0, availableAt: 1 } },
    ),
  ]);
  return {
    pending,
    oldestPendingAgeMs: oldest ? now.getTime() - new Date(oldest.occurredAt).getTime() : undefined,
    oldestPendingEventId: oldest?.eventId,
    scheduled,
    overdue,
    nextDueAt: next?.availableAt,
  };
}
