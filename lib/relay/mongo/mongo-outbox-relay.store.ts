import type { mongo } from 'mongoose';
import { groupBy } from '../../common/group-by';
import type { OutboxDeadLetter } from '../../documents/dead-letter.document';
import {
  aggregateKey,
  BY_AGGREGATE,
  DRAIN_ORDER,
  PUBLISHABLE_NOW,
  SLOT_DRAIN_ORDER,
  type OutboxDoc,
  type OutboxEventRecord,
} from '../../documents/outbox-event.document';
import type {
  AggregateRef,
  DeadLetterRecord,
  DueAggregate,
  FailureRecord,
  MarkedDead,
  OutboxRelayStore,
  PendingState,
  RelayFence,
  ScheduledStats,
  StaleEvent,
} from '../ports/outbox-relay.store';
import { eventSlot } from '../../events/event-slot';
import type { SlotRange } from '../ports/partition-layout';
import { withOlderUnslotted } from '../ports/unslotted-in-page';
import { stampMissingSlots } from './missing-slots';
import { slotsIn } from './slot-range.filters';
import { RELAY_STATE_COLLECTION } from '../../documents/relay-state.document';
import { majorityTime, majorityWriteTime, relayCollection, serverTime } from './relay-collections';
import { ScheduledEventReads } from './scheduled-events.reads';

const ERROR_HISTORY = 20;

/**
 * Keyset condition "after `last`" in the drain's order (aggregateType, aggregateId, sequence,
 * _id), where a missing `sequence` sorts before any number, as in MongoDB. With a slot range
 * the order starts with `slot` (`SLOT_DRAIN_ORDER`, one index range per partition).
 */
function afterInDrainOrder(last: OutboxEventRecord, bySlot: boolean): mongo.Filter<OutboxDoc> {
  const { aggregateType, aggregateId, sequence, _id } = last;
  const later =
    typeof sequence === 'number'
      ? [{ sequence: { $gt: sequence } }, { sequence, _id: { $gt: _id } }]
      : [{ sequence: { $exists: true } }, { sequence: { $exists: false }, _id: { $gt: _id } }];
  const inSlot = [
    { aggregateType: { $gt: aggregateType } },
    { aggregateType, aggregateId: { $gt: aggregateId } },
    { aggregateType, aggregateId, $or: later },
  ];
  return slotFirst(last, inSlot, bySlot);
}

function afterAggregate(ref: AggregateRef | undefined, bySlot: boolean): mongo.Filter<OutboxDoc> {
  if (!ref) return {};
  const inSlot = [
    { aggregateType: { $gt: ref.aggregateType } },
    { aggregateType: ref.aggregateType, aggregateId: { $gt: ref.aggregateId } },
  ];
  return slotFirst(ref, inSlot, bySlot);
}

/** `inSlot`, after the slot of `ref` (stored on its events, a function of the aggregate) first. */
function slotFirst(ref: AggregateRef & { slot?: number }, inSlot: object[], bySlot: boolean) {
  if (!bySlot) return { $or: inSlot } as mongo.Filter<OutboxDoc>;
  const slot = ref.slot ?? eventSlot(ref.aggregateType, ref.aggregateId);
  return { $or: [{ slot: { $gt: slot } }, { slot, $or: inSlot }] } as mongo.Filter<OutboxDoc>;
}

/**
 * The owner stamp (`RelayFence`): a relay write lands only on a document no newer leader wrote,
 * and stamps it. Documents have no stamp until a relay first writes them.
 */
function fenced(fence: RelayFence): { filter: mongo.Filter<OutboxDoc>; stamp: Partial<OutboxDoc> } {
  if (fence === null) return { filter: {}, stamp: {} };
  // "Not above": also true when the field is missing; one condition, no $or (cheaper to plan).
  return { filter: { relayFence: { $not: { $gt: fence } } }, stamp: { relayFence: fence } };
}

/**
 * The relay's reads and writes of the outbox and dead-letter collections, through the native
 * driver of the app's connection, at read concern majority from the primary and `w: majority`
 * (see `RELAY_COLLECTION_OPTIONS`).
 *
 * With a `range` (one relay partition), every read that scans the collection is limited to
 * events whose `slot` lies in it (`slot >= from && slot < to`), drain pages and retrying
 * aggregates come slot first (`SLOT_DRAIN_ORDER`, served by the `outbox_relay_slot_*`
 * indexes), and events without a slot are not seen until `stampMissingSlots` stamped them,
 * except by drain pages, which hold those older than the page's events of their aggregate
 * (`withOlderUnslotted`).
 * Reads by `_id` or by aggregate and every write are the same with or without a range.
 */
export class MongoOutboxRelayStore implements OutboxRelayStore {
  readonly outbox: mongo.Collection<OutboxDoc>;
  readonly deadLetters: mongo.Collection<OutboxDeadLetter>;
  private readonly inRange: mongo.Filter<OutboxDoc>;
  private readonly bySlot: boolean;
  /** With a range only (see `OutboxRelayStore.stampMissingSlots`). */
  readonly stampMissingSlots?: (limit: number) => Promise<number>;
  private readonly scheduled: ScheduledEventReads;
  /** The relay state collection, where `majorityWriteTime` writes its document. */
  private readonly dueClock: mongo.Collection<{ _id: string }>;

  constructor(
    private readonly db: mongo.Db,
    names: { outbox: string; deadLetters: string; relayState?: string },
    range?: SlotRange,
  ) {
    this.dueClock = relayCollection(db, names.relayState ?? RELAY_STATE_COLLECTION);
    this.outbox = relayCollection<OutboxDoc>(db, names.outbox);
    this.deadLetters = relayCollection<OutboxDeadLetter>(db, names.deadLetters);
    this.bySlot = range !== undefined;
    if (range) this.stampMissingSlots = (limit) => stampMissingSlots(this.outbox, limit);
    this.inRange = range ? (slotsIn(range) as mongo.Filter<OutboxDoc>) : {};
    this.scheduled = new ScheduledEventReads(this.outbox, this.inRange);
  }

  serverTime(): Promise<Date> {
    return serverTime(this.db);
  }

  majorityTime(): Promise<Date> {
    return majorityTime(this.db);
  }

  majorityWriteTime(): Promise<Date> {
    return majorityWriteTime(this.db, this.dueClock);
  }

  findDueAggregates(dueBy: Date, limit: number, marked: boolean): Promise<DueAggregate[]> {
    return this.scheduled.dueAggregates(dueBy, limit, marked);
  }

  nextDueAt(after?: Date): Promise<Date | undefined> {
    return this.scheduled.earliest(after ? { $gt: after } : {});
  }

  scheduledStats(now: Date): Promise<ScheduledStats> {
    return this.scheduled.stats(now);
  }

  findPendingState(ids: readonly unknown[]): Promise<PendingState[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.outbox
      .find(
        { _id: { $in: ids as never[] }, status: 'pending' },
        { projection: { payload: 0, headers: 0 } },
      )
      .toArray() as Promise<PendingState[]>;
  }

  async findPendingOfAggregates(
    refs: readonly AggregateRef[],
    limit: number,
    dueBy?: Date,
  ): Promise<OutboxEventRecord[]> {
    // One clause per type: the aggregate ids of a type as one `$in`, which the
    // `outbox_relay_aggregate_order` index serves in `DRAIN_ORDER` without a sort stage.
    const idsByType = groupBy(
      refs,
      (ref) => ref.aggregateType,
      (ref) => ref.aggregateId,
    );
    const ofType = [...idsByType].map(([aggregateType, ids]) => ({
      aggregateType,
      aggregateId: ids.length === 1 ? ids[0] : { $in: ids },
    }));
    // With `dueBy`, scheduled events not due by it are left out, not cut at (see the port).
    const due = dueBy && {
      $or: [{ availableAt: { $exists: false } }, { availableAt: { $lte: dueBy } }],
    };
    const which = ofType.length === 1 ? ofType[0] : { $or: ofType };
    const filter = due && '$or' in which ? { $and: [which, due] } : { ...which, ...due };
    return this.outbox
      .find({ status: 'pending', ...filter })
      .sort(DRAIN_ORDER)
      .limit(limit)
      .toArray() as Promise<OutboxEventRecord[]>;
  }

  async findPendingPage(
    after: OutboxEventRecord | undefined,
    limit: number,
  ): Promise<OutboxEventRecord[]> {
    const later = after ? afterInDrainOrder(after, this.bySlot) : {};
    if (!this.bySlot) {
      return (await this.outbox
        .find({ ...PUBLISHABLE_NOW, ...later })
        .sort(DRAIN_ORDER)
        .limit(limit)
        .toArray()) as OutboxEventRecord[];
    }
    // The range's page and, in the same read, the events without a slot (a missing slot sorts
    // first: `SLOT_DRAIN_ORDER`, index `outbox_relay_slot_order`), asking for as many more as
    // there were, until the page holds `limit` events with a slot (or the range ends).
    const filter = {
      ...PUBLISHABLE_NOW,
      $or: [{ slot: null }, { ...this.inRange, ...later }],
    };
    for (let unslotted = 0; ;) {
      const read = (await this.outbox
        .find(filter as mongo.Filter<OutboxDoc>)
        .sort(SLOT_DRAIN_ORDER)
        .limit(limit + unslotted)
        .toArray()) as OutboxEventRecord[];
      const found = read.filter((event) => event.slot == null).length;
      if (found <= unslotted || read.length < limit + unslotted) {
        return withOlderUnslotted(read, limit);
      }
      unslotted = found;
    }
  }

  async findRetryingAggregates(
    after: AggregateRef | undefined,
    limit: number,
  ): Promise<Array<AggregateRef & { retryAt: Date }>> {
    // Marked events, by aggregate (index outbox_relay_marked), grouped here: one aggregate may
    // have several marked events. A full page's last aggregate may be cut short: it is read
    // again by the next page (unless it fills the page alone).
    const docLimit = limit * 4;
    const docs = await this.outbox
      .find(
        {
          status: 'pending',
          nextAttemptAt: { $exists: true },
          ...this.inRange,
          ...afterAggregate(after, this.bySlot),
        },
        { projection: { aggregateType: 1, aggregateId: 1, nextAttemptAt: 1 } },
      )
      .sort(this.bySlot ? { slot: 1, ...BY_AGGREGATE } : BY_AGGREGATE)
      .limit(docLimit)
      .toArray();
    const groups = [...groupBy(docs, aggregateKey).values()].map((ofAggregate) => ({
      aggregateType: ofAggregate[0].aggregateType,
      aggregateId: ofAggregate[0].aggregateId,
      retryAt: ofAggregate
        .map((doc) => doc.nextAttemptAt as Date)
        .reduce((earliest, at) => (at < earliest ? at : earliest)),
    }));
    if (docs.length >= docLimit && groups.length > 1) groups.pop();
    return groups.slice(0, limit);
  }

  findStaleEvents(
    afterId: unknown,
    olderThan: Date,
    dueBy: Date,
    limit: number,
  ): Promise<StaleEvent[]> {
    return this.outbox
      .find(
        {
          ...PUBLISHABLE_NOW,
          ...this.inRange,
          occurredAt: { $lt: olderThan },
          $or: [{ nextAttemptAt: { $exists: false } }, { nextAttemptAt: { $lte: dueBy } }],
          ...(afterId !== undefined ? { _id: { $gt: afterId as never } } : {}),
        },
        { projection: { aggregateType: 1, aggregateId: 1 } },
      )
      .sort({ _id: 1 })
      .limit(limit)
      .toArray() as Promise<StaleEvent[]>;
  }

  async pendingStats(): Promise<{ count: number; oldestOccurredAt?: Date }> {
    // Scheduled events are not lag until due: `scheduledStats` reports them.
    const pending = { ...PUBLISHABLE_NOW, ...this.inRange };
    const count = await this.outbox.countDocuments(pending);
    if (count === 0) return { count };
    const oldest = await this.outbox.findOne(pending, {
      sort: { _id: 1 },
      projection: { occurredAt: 1 },
    });
    return { count, oldestOccurredAt: oldest?.occurredAt };
  }

  findMarkedDead(limit: number): Promise<MarkedDead[]> {
    return this.outbox
      .find({ status: 'dead', ...this.inRange })
      .limit(limit)
      .toArray() as Promise<MarkedDead[]>;
  }

  async markPublished(ids: readonly unknown[], at: Date, fence: RelayFence): Promise<void> {
    if (ids.length === 0) return;
    const { filter, stamp } = fenced(fence);
    await this.outbox.updateMany(
      { _id: { $in: ids as never[] }, status: 'pending', ...filter },
      { $set: { status: 'published', publishedAt: at, ...stamp }, $unset: { nextAttemptAt: '' } },
    );
  }

  async markHeld(ids: readonly unknown[], retryAt: Date, fence: RelayFence): Promise<void> {
    if (ids.length === 0) return;
    const { filter, stamp } = fenced(fence);
    await this.outbox.updateMany(
      {
        _id: { $in: ids as never[] },
        status: 'pending',
        nextAttemptAt: { $exists: false },
        ...filter,
      },
      { $set: { nextAttemptAt: retryAt, ...stamp } },
    );
  }

  async recordFailure(
    event: OutboxEventRecord,
    failure: FailureRecord,
    fence: RelayFence,
  ): Promise<void> {
    const { filter, stamp } = fenced(fence);
    await this.outbox.updateOne(
      { _id: event._id, status: 'pending', ...filter },
      {
        $set: {
          attempts: failure.attempts,
          nextAttemptAt: failure.nextAttemptAt,
          lastError: failure.error,
          ...stamp,
        },
        $push: {
          errorHistory: {
            $each: [{ at: failure.at, attempt: failure.attempts, error: failure.error }],
            $slice: -ERROR_HISTORY,
          },
        },
      },
    );
  }

  async markDead(
    event: OutboxEventRecord,
    record: DeadLetterRecord,
    fence: RelayFence,
  ): Promise<void> {
    const { filter, stamp } = fenced(fence);
    await this.outbox.updateOne(
      { _id: event._id, status: 'pending', ...filter },
      { $set: { status: 'dead', deadLetter: record, ...stamp }, $unset: { nextAttemptAt: '' } },
    );
  }

  async copyToDeadLetters(event: MarkedDead): Promise<void> {
    const {
      _id,
      status: _status,
      errorHistory,
      deadLetter,
      relayFence: _fence,
      nextAttemptAt: _next,
      lastError: _lastError,
      attempts: _attempts,
      ...rest
    } = event as MarkedDead & Pick<OutboxDoc, 'relayFence'>;
    const errors = [
      ...(errorHistory ?? []),
      { at: deadLetter.at, attempt: deadLetter.attempts, error: deadLetter.error },
    ].slice(-ERROR_HISTORY);
    await this.deadLetters.updateOne(
      { eventId: event.eventId },
      {
        $setOnInsert: { ...rest, outboxId: _id },
        $set: {
          reason: deadLetter.reason,
          attempts: deadLetter.attempts,
          lastError: deadLetter.error,
          errors,
          deadLetteredAt: deadLetter.at,
        },
      },
      { upsert: true },
    );
  }

  async removeDead(id: unknown, fence: RelayFence): Promise<void> {
    const { filter } = fenced(fence);
    await this.outbox.deleteOne({ _id: id as never, status: 'dead', ...filter });
  }
}
