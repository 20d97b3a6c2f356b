import type { ClientSession, mongo } from 'mongoose';
import type { OutboxDoc } from '../../documents/outbox-event.document';
import { CANCEL_PROJECTION, cancelResultOf } from './cancel-result';
import type { CancelScheduledResult, CancelView } from './cancel-result';

/**
 * Cancels the scheduled event `eventId` of the outbox collection `outbox`, in `session`'s
 * transaction when given (then it takes effect only if that transaction commits). One
 * conditional update: pending, scheduled and not yet due BY THE SERVER'S CLOCK, which the server
 * checks itself in the filter (`$expr` with `$$NOW`,
 * https://www.mongodb.com/docs/manual/reference/operator/query/expr/ and
 * https://www.mongodb.com/docs/manual/reference/aggregation-variables/), and sets
 * `cancelledAt` to its own time with an update pipeline
 * (https://www.mongodb.com/docs/manual/tutorial/update-documents-with-aggregation-pipeline/;
 * MongoDB 4.2+). When it matches nothing, one read says why (`CancelScheduledResult`).
 * The relay never publishes a document whose status is no longer `pending`; cancelled documents
 * are removed by retention (`RELAY_OUTBOX_INDEXES.cancelledRetention`, a TTL index the relay creates with its retention).
 */
export async function cancelScheduledEvent(
  outbox: mongo.Collection<OutboxDoc>,
  eventId: string,
  session?: ClientSession,
): Promise<CancelScheduledResult> {
  const cancelled = await outbox.findOneAndUpdate(
    {
      eventId,
      status: 'pending',
      availableAt: { $exists: true },
      $expr: { $gt: ['$availableAt', '$$NOW'] },
    },
    [{ $set: { status: 'cancelled', cancelledAt: '$$NOW' } }],
    { session, returnDocument: 'after', projection: CANCEL_PROJECTION },
  );
  if (cancelled) return cancelResultOf(eventId, cancelled, true);
  const current = await outbox.findOne<CancelView>(
    { eventId },
    { session, projection: CANCEL_PROJECTION },
  );
  return cancelResultOf(eventId, current);
}
