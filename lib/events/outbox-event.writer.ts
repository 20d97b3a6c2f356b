import { Inject, Injectable } from '@nestjs/common';
import type { ClientSession } from 'mongoose';
import type { NewOutboxEvent, OutboxDoc } from '../documents/outbox-event.document';
import { getOutboxEventModel } from '../documents/outbox-event.schema';
import { OutboxConnectionHost } from '../common/outbox-connection.host';
import { OUTBOX_EVENTS_OPTIONS, OUTBOX_STORAGE_OPTIONS } from '../common/outbox.constants';
import type { OutboxStorageOptions } from '../common/outbox-storage.options';
import type { OutboxEventsOptions } from './outbox-events.options';
import { AggregateSequencer } from './aggregate-sequencer';
import { eventSlot } from './event-slot';
import type { ScheduleRequest } from './schedule/emit-schedule';
import { cancelScheduledEvent } from './schedule/cancel-scheduled-event';
import type { CancelScheduledResult } from './schedule/cancel-result';
import { readScheduleSnapshot } from './schedule/schedule-snapshot.reader';
import type { ScheduleQuery, ScheduleSnapshot } from './schedule/schedule.resolver';

/** Where the write side puts outbox rows. The seam unit tests replace. */
export interface OutboxEventWriter {
  /**
   * Inserts `events` in the transaction of `session` (one round trip). `schedules`: what each
   * emit asked for (`availableAt` is already resolved on the rows), for writers that record it.
   */
  insert(
    events: NewOutboxEvent[],
    session: ClientSession,
    schedules?: readonly ScheduleRequest[],
  ): Promise<void>;
  /** The server's time and the aggregates' latest pending `availableAt`, in the transaction. */
  readSchedule(query: ScheduleQuery, session: ClientSession): Promise<ScheduleSnapshot>;
  /** Cancels a scheduled event in the transaction of `session` (see `cancelScheduledEvent`). */
  cancel(eventId: string, session: ClientSession): Promise<CancelScheduledResult>;
  /**
   * Creates the write side's indexes (unique `eventId`, pending scheduled events by aggregate)
   * and, if used, the counters' collection.
   */
  ensureIndexes(): Promise<void>;
}

/**
 * Every row carries its `slot` (relay partitions read slot ranges). The emitter stamps it; rows
 * built elsewhere (a requeued dead letter) get it here.
 */
export function withSlots(events: NewOutboxEvent[]): NewOutboxEvent[] {
  if (events.every((event) => event.slot !== undefined)) return events;
  return events.map((event) =>
    event.slot !== undefined
      ? event
      : { ...event, slot: eventSlot(event.aggregateType, event.aggregateId) },
  );
}

export const OUTBOX_EVENT_WRITER = Symbol('outbox:event_writer');

/**
 * The default writer: one `insertMany` through the outbox Model, in the given session (after one
 * counter write per aggregate with `aggregateSequence`); the schedule read and cancel through the
 * driver's collection, in the same session.
 */
@Injectable()
export class MongooseOutboxEventWriter implements OutboxEventWriter {
  constructor(
    private readonly host: OutboxConnectionHost,
    @Inject(OUTBOX_EVENTS_OPTIONS) private readonly options: OutboxEventsOptions,
    @Inject(OUTBOX_STORAGE_OPTIONS) private readonly storage: OutboxStorageOptions,
  ) {}

  async insert(events: NewOutboxEvent[], session: ClientSession): Promise<void> {
    const slotted = withSlots(events);
    const rows = this.options.aggregateSequence
      ? await this.sequencer().stamp(slotted, session)
      : slotted;
    // lean: the rows are complete and validated already; skips hydration and casting.
    await this.model().insertMany(rows, { session, lean: true, ordered: true });
  }

  readSchedule(query: ScheduleQuery, session: ClientSession): Promise<ScheduleSnapshot> {
    return readScheduleSnapshot(this.collection(), query, session);
  }

  cancel(eventId: string, session: ClientSession): Promise<CancelScheduledResult> {
    return cancelScheduledEvent(this.collection(), eventId, session);
  }

  async ensureIndexes(): Promise<void> {
    await this.model().createIndexes();
    if (this.options.aggregateSequence) {
      // Created up front: a collection created implicitly inside concurrent transactions
      // makes them conflict on the creation itself.
      await this.sequencer().ensureCollection();
    }
  }

  private sequencerInstance?: AggregateSequencer;

  /** Created on first use: the connection is resolved when the module initializes. */
  private sequencer(): AggregateSequencer {
    return (this.sequencerInstance ??= new AggregateSequencer(
      this.host.connection,
      this.storage.collections.sequences,
    ));
  }

  private model() {
    return getOutboxEventModel(this.host.connection, this.storage.collections.outbox);
  }

  private collection() {
    return this.host.connection.collection<OutboxDoc>(this.storage.collections.outbox);
  }
}
