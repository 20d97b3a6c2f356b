import { Inject, Injectable } from '@nestjs/common';
import type { ClientSession, Connection, mongo } from 'mongoose';
import type { NewOutboxEvent, OutboxDoc } from '../documents/outbox-event.document';
import { getOutboxEventModel, OutboxEventSchema } from '../documents/outbox-event.schema';
import { tenantConnection } from '../tenants/tenant.connection';
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

/**
 * Where the write side puts outbox rows. The seam unit tests replace. `database`: with the
 * `tenants` option, the tenant database (`databaseOf(tenant)`) the rows, counters and schedule
 * reads go to, in the same session; undefined: the connection's own database.
 */
export interface OutboxEventWriter {
  /**
   * Inserts `events` in the transaction of `session` (one round trip). `schedules`: what each
   * emit asked for (`availableAt` is already resolved on the rows), for writers that record it.
   */
  insert(
    events: NewOutboxEvent[],
    session: ClientSession,
    schedules?: readonly ScheduleRequest[],
    database?: string,
  ): Promise<void>;
  /** The server's time and the aggregates' latest pending `availableAt`, in the transaction. */
  readSchedule(
    query: ScheduleQuery,
    session: ClientSession,
    database?: string,
  ): Promise<ScheduleSnapshot>;
  /** Cancels a scheduled event in the transaction of `session` (see `cancelScheduledEvent`). */
  cancel(
    eventId: string,
    session: ClientSession,
    database?: string,
  ): Promise<CancelScheduledResult>;
  /**
   * Creates the write side's indexes (unique `eventId`, pending scheduled events by aggregate)
   * and, if used, the counters' collection (in `database`, or the connection's).
   */
  ensureIndexes(database?: string): Promise<void>;
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
 * driver's collection, in the same session. A tenant database is reached with
 * `connection.useDb(database, { useCache: true })` (the same client and pool, so the same
 * session and transaction); its indexes are created the first time this process writes to it
 * (`createIndexes`), outside the transaction, or earlier by `OutboxTenants.ensureTenantIndexes`.
 */
@Injectable()
export class MongooseOutboxEventWriter implements OutboxEventWriter {
  private readonly sequencers = new Map<string, AggregateSequencer>();
  private readonly prepared = new Map<string, Promise<void>>();

  constructor(
    private readonly host: OutboxConnectionHost,
    @Inject(OUTBOX_EVENTS_OPTIONS) private readonly options: OutboxEventsOptions,
    @Inject(OUTBOX_STORAGE_OPTIONS) private readonly storage: OutboxStorageOptions,
  ) {}

  async insert(
    events: NewOutboxEvent[],
    session: ClientSession,
    _schedules?: readonly ScheduleRequest[],
    database?: string,
  ): Promise<void> {
    if (database !== undefined && this.storage.createIndexes) await this.ensureIndexes(database);
    const slotted = withSlots(events);
    const rows = this.options.aggregateSequence
      ? await this.sequencer(database).stamp(slotted, session)
      : slotted;
    // lean: the rows are complete and validated already; skips hydration and casting.
    await this.model(database).insertMany(rows, { session, lean: true, ordered: true });
  }

  readSchedule(
    query: ScheduleQuery,
    session: ClientSession,
    database?: string,
  ): Promise<ScheduleSnapshot> {
    return readScheduleSnapshot(this.collection(database), query, session);
  }

  cancel(
    eventId: string,
    session: ClientSession,
    database?: string,
  ): Promise<CancelScheduledResult> {
    return cancelScheduledEvent(this.collection(database), eventId, session);
  }

  /** Once per database per process (a failed attempt is tried again at the next call). */
  ensureIndexes(database?: string): Promise<void> {
    const key = database ?? '';
    let done = this.prepared.get(key);
    if (!done) {
      done = this.createIndexes(database).catch((error: unknown) => {
        this.prepared.delete(key);
        throw error;
      });
      this.prepared.set(key, done);
    }
    return done;
  }

  private async createIndexes(database: string | undefined): Promise<void> {
    // The driver's createIndex, never in the running transaction's session.
    const collection = this.collection(database);
    for (const [key, options] of OutboxEventSchema.indexes()) {
      await collection.createIndex(
        key as mongo.IndexSpecification,
        options as mongo.CreateIndexesOptions,
      );
    }
    if (this.options.aggregateSequence) {
      // Created up front: a collection created implicitly inside concurrent transactions
      // makes them conflict on the creation itself.
      await this.sequencer(database).ensureCollection();
    }
  }

  /** Created on first use: the connection is resolved when the module initializes. */
  private sequencer(database: string | undefined): AggregateSequencer {
    const key = database ?? '';
    let sequencer = this.sequencers.get(key);
    if (!sequencer) {
      sequencer = new AggregateSequencer(
        this.connection(database),
        this.storage.collections.sequences,
      );
      this.sequencers.set(key, sequencer);
    }
    return sequencer;
  }

  private connection(database: string | undefined): Connection {
    return tenantConnection(this.host.connection, database);
  }

  private model(database: string | undefined) {
    return getOutboxEventModel(this.connection(database), this.storage.collections.outbox);
  }

  private collection(database: string | undefined) {
    return this.connection(database).collection<OutboxDoc>(this.storage.collections.outbox);
  }
}
