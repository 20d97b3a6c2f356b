import type { mongo } from 'mongoose';
import { DUE_RUN_ORDER, type OutboxDoc } from '../../documents/outbox-event.document';
import { SCHEDULED_COUNT_CAP } from '../ports/outbox-relay.store';
import type { DueAggregate, ScheduledStats } from '../ports/outbox-relay.store';
import { DueAggregatesCollector } from '../scheduled/due-aggregates.collector';
import type { DueKey, DueRead } from '../scheduled/due-aggregates.collector';

/**
 * The reads of scheduled events (pending, with `availableAt`) for `MongoOutboxRelayStore`, within
 * `inRange` (a partition's slot range, or `{}`). Every one is served by the partial index
 * `outbox_relay_due_runs` (`DUE_RUN_ORDER`: `{ availableAt: 1, aggregateType: 1, aggregateId: 1,
 * _id: 1 }`), or with partitions by `outbox_relay_slot_due_runs` (the same, slot first): both hold only pending
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
   * Aggregates with a due event, marked (`nextAttemptAt`) or not, each once, by their earliest
   * due event, at most `limit`: reads of the index that each start after the last run (events of
   * one aggregate due at one time) the previous read reached (`DueAggregatesCollector`), so an
   * aggregate with a long backlog costs one seek, not a page. The `$or` after a run is a range on
   * the index's leading keys: MongoDB bounds the scan by it
   * (https://www.mongodb.com/docs/manual/core/indexes/index-types/index-compound/#sort-order);
   * PoppyDB answers the same results but cannot show mongod's keys examined.
   */
  async dueAggregates(dueBy: Date, limit: number, marked: boolean): Promise<DueAggregate[]> {
    const collector = new DueAggregatesCollector(limit);
    while (!collector.done) collector.take(await this.dueRead(dueBy, marked, collector.next()));
    return collector.result();
  }

  private dueRead(dueBy: Date, marked: boolean, { after, batch }: DueRead): Promise<DueKey[]> {
    const filter = {
      ...this.scheduled({ $lte: dueBy }),
      nextAttemptAt: { $exists: marked },
      ...(after ? { $or: afterRun(after) } : {}),
    } as mongo.Filter<OutboxDoc>;
    return this.outbox
      .find<DueKey>(filter, {
        projection: { _id: 0, aggregateType: 1, aggregateId: 1, availableAt: 1 },
      })
      .sort(DUE_RUN_ORDER)
      .limit(batch)
      .toArray();
  }

  /** The earliest `availableAt` with `dueAt`'s condition on it; none: undefined. */
  async earliest(dueAt: object = {}): Promise<Date | undefined> {
    const first = await this.outbox.findOne(this.scheduled(dueAt), {
      sort: DUE_RUN_ORDER,
      projection: { availableAt: 1 },
    });
    return first?.availableAt ?? undefined;
  }

  async stats(now: Date): Promise<ScheduledStats> {
    // A capped count: at most `SCHEDULED_COUNT_CAP` index keys per call, however many wait.
    const count = await this.outbox.countDocuments(this.scheduled(), {
      limit: SCHEDULED_COUNT_CAP,
    });
    if (count === 0) return { count };
    const capped = count >= SCHEDULED_COUNT_CAP ? { countCapped: true as const } : {};
    const [oldestOverdueAt, nextDueAt] = await Promise.all([
      this.earliest({ $lte: now }),
      this.earliest({ $gt: now }),
    ]);
    return { count, ...capped, nextDueAt, oldestOverdueAt };
  }
}

/** The events after every event of `run` in `DUE_RUN_ORDER` (later time, or same time and later aggregate). */
function afterRun({ availableAt, aggregateType, aggregateId }: DueKey): object[] {
  return [
    { availableAt: { $gt: availableAt } },
    { availableAt, aggregateType: { $gt: aggregateType } },
    { availableAt, aggregateType, aggregateId: { $gt: aggregateId } },
  ];
}
