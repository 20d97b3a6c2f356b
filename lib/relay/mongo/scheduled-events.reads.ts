import type { mongo } from 'mongoose';
import { groupBy } from '../../common/group-by';
import { aggregateKey, DUE_ORDER, type OutboxDoc } from '../../documents/outbox-event.document';
import type { DueAggregate, ScheduledStats } from '../ports/outbox-relay.store';

/**
 * The reads of scheduled events (pending, with `availableAt`) for `MongoOutboxRelayStore`, within
 * `inRange` (a partition's slot range, or `{}`). Every one is served by the partial index
 * `outbox_relay_scheduled` (`{ availableAt: 1, _id: 1 }`), or with partitions by
 * `outbox_relay_slot_scheduled` (`{ slot: 1, availableAt: 1, _id: 1 }`): both hold only pending
 * scheduled events, so they cost nothing for events published at once, and a read of what is due
 * touches only the due keys (https://www.mongodb.com/docs/manual/core/index-partial/). Each
 * condition on `availableAt` repeats `$exists: true` so that the query visibly implies the
 * indexes' filter, which the planner requires to use them.
 */
export class ScheduledEventReads {
  constructor(
    private readonly outbox: mongo.Collection<OutboxDoc>,
    private readonly inRange: mongo.Filter<OutboxDoc>,
  ) {}

  /** The filter of pending scheduled events in range, with `availableAt` limited by `dueAt`. */
  private scheduled(dueAt: object = {}): mongo.Filter<OutboxDoc> {
    return {
      status: 'pending',
      availableAt: { $exists: true, ...dueAt },
      ...this.inRange,
    } as mongo.Filter<OutboxDoc>;
  }

  /**
   * Due events, marked (`nextAttemptAt`) or not, by (availableAt, _id), grouped here by
   * aggregate (first one wins: its earliest due event). A page of events of few aggregates
   * answers fewer aggregates: the rest come with the next read, once these are published.
   */
  async dueAggregates(dueBy: Date, limit: number, marked: boolean): Promise<DueAggregate[]> {
    const filter = { ...this.scheduled({ $lte: dueBy }), nextAttemptAt: { $exists: marked } };
    const docs = await this.outbox
      .find(filter, {
        projection: { aggregateType: 1, aggregateId: 1, availableAt: 1 },
      })
      .sort(DUE_ORDER)
      .limit(limit * 4)
      .toArray();
    const firsts = [...groupBy(docs, aggregateKey).values()].slice(0, limit);
    return firsts.map(([{ aggregateType, aggregateId, availableAt }]) => ({
      aggregateType,
      aggregateId,
      availableAt: availableAt as Date,
    }));
  }

  /** The earliest `availableAt` with `dueAt`'s condition on it; none: undefined. */
  async earliest(dueAt: object = {}): Promise<Date | undefined> {
    const first = await this.outbox.findOne(this.scheduled(dueAt), {
      sort: DUE_ORDER,
      projection: { availableAt: 1 },
    });
    return first?.availableAt ?? undefined;
  }

  async stats(now: Date): Promise<ScheduledStats> {
    const count = await this.outbox.countDocuments(this.scheduled());
    if (count === 0) return { count };
    const [oldestOverdueAt, nextDueAt] = await Promise.all([
      this.earliest({ $lte: now }),
      this.earliest({ $gt: now }),
    ]);
    return { count, nextDueAt, oldestOverdueAt };
  }
}
