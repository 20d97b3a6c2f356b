import type { ClientSession, mongo } from 'mongoose';
import { groupBy } from '../../common/group-by';
import {
  aggregateKey,
  OUTBOX_SCHEDULED_BY_AGGREGATE_INDEX,
} from '../../documents/outbox-event.document';
import type { AggregateRef, OutboxDoc } from '../../documents/outbox-event.document';
import type { ScheduleQuery, ScheduleSnapshot } from './schedule.resolver';

interface SnapshotDoc {
  latest: Array<{ _id: AggregateRef; at: Date; lastId: unknown }>;
  now?: Date | null;
}

/**
 * One aggregation in the transaction's session: the latest `availableAt` and the greatest `_id`
 * of the pending scheduled events of `query.aggregates` (on the partial index
 * `OUTBOX_SCHEDULED_BY_AGGREGATE_INDEX`: every `$or` branch repeats its filter, so each can use
 * it) and the server's time. `$$NOW` is the server's current time, the same in every stage
 * (https://www.mongodb.com/docs/manual/reference/aggregation-variables/#mongodb-variable-variable.NOW,
 * MongoDB 4.2+). `$facet` always returns one document, even when nothing matched
 * (https://www.mongodb.com/docs/manual/reference/operator/aggregation/facet/), so the time comes
 * back in every case; the `$match` before it is what uses the index.
 */
export async function readScheduleSnapshot(
  outbox: mongo.Collection<OutboxDoc>,
  query: ScheduleQuery,
  session?: ClientSession,
): Promise<ScheduleSnapshot> {
  const [doc] = await outbox
    .aggregate<SnapshotDoc>(
      [
        { $match: pendingScheduledOf(query.aggregates) },
        {
          $facet: {
            latest: [
              {
                $group: {
                  _id: { aggregateType: '$aggregateType', aggregateId: '$aggregateId' },
                  at: { $max: '$availableAt' },
                  lastId: { $max: '$_id' },
                },
              },
            ],
          },
        },
        { $addFields: { now: '$$NOW' } },
      ],
      { session },
    )
    .toArray();
  const latest = new Map<string, Date>();
  const lastIds = new Map<string, unknown>();
  for (const { _id, at, lastId } of doc?.latest ?? []) {
    latest.set(aggregateKey(_id), at);
    lastIds.set(aggregateKey(_id), lastId);
  }
  return { now: doc?.now ?? undefined, latest, lastIds };
}

/** The filter of the pending scheduled events of `aggregates`, one `$or` branch per type. */
export function pendingScheduledOf(aggregates: readonly AggregateRef[]): Record<string, unknown> {
  if (aggregates.length === 0) return { _id: { $in: [] } };
  const byType = groupBy(
    aggregates,
    (ref) => ref.aggregateType,
    (ref) => ref.aggregateId,
  );
  const filter = OUTBOX_SCHEDULED_BY_AGGREGATE_INDEX.partialFilterExpression;
  const branches = [...byType].map(([aggregateType, ids]) => ({
    ...filter,
    aggregateType,
    aggregateId: ids.length === 1 ? ids[0] : { $in: ids },
  }));
  return branches.length === 1 ? branches[0] : { $or: branches };
}
