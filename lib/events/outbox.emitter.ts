import { Inject, Injectable, Optional } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import type { OutboxEventInput } from '../documents/outbox-event.envelope';
import { OUTBOX_EVENTS_OPTIONS } from '../common/outbox.constants';
import type { OutboxEventsOptions } from './outbox-events.options';
import { OutboxTransactionClosedError } from '../transaction/errors/outbox-transaction-closed.error';
import { OutboxTransactionRequiredError } from '../transaction/errors/outbox-transaction-required.error';
import type { OutboxTransactionContext } from '../transaction/transaction-context';
import { TransactionRunner } from '../transaction/transaction.runner';
import { withEmitTraceContext } from '../telemetry/tracing/emit-trace-context';
import { eventSlot } from './event-slot';
import { validateOutboxEvent } from './event.validator';
import type { NewOutboxEvent } from '../documents/outbox-event.document';
import { OUTBOX_EVENT_WRITER, type OutboxEventWriter } from './outbox-event.writer';
import type { EmitSchedule, ScheduleRequest } from './schedule/emit-schedule';
import type { CancelScheduledResult } from './schedule/cancel-result';
import { validateSchedule } from './schedule/schedule.validator';
import { applySchedules, scheduleQueryOf, type BufferedEvent } from './schedule/schedule.resolver';
import { InvalidScheduleError } from './errors/invalid-schedule.error';
import { groupBy } from '../common/group-by';
import { resolveTarget, type TenantTarget } from '../tenants/tenant.resolution';
import { OUTBOX_TENANTS_OPTIONS, type TenantsSetting } from '../tenants/tenants.resolved';

/** One event and its schedule (`@EmitsEvent` gives each declared event its own). */
export interface ScheduledEmit {
  event: OutboxEventInput;
  schedule?: EmitSchedule;
}

/**
 * Emits events decided in a method body. Must be called inside a transaction (a `@Transactional()`
 * method or `TransactionRunner.run()`); the events are inserted into the outbox in that
 * transaction, with one `insertMany` in its session by the before-commit hook the emitter
 * registers on the runner (preceded, when an event is scheduled or its aggregate may have
 * scheduled ones, by one read of the server's time and of those aggregates' pending scheduled
 * events: see `docs/writing-events.md`). Synchronous on purpose: a bad event throws right here,
 * inside the transaction, which then rolls back; nothing can be forgotten un-awaited.
 */
@Injectable()
export class OutboxEmitter {
  /** The events emitted in each attempt (a retried body starts with none). */
  private readonly emitted = new WeakMap<OutboxTransactionContext, BufferedEvent[]>();

  constructor(
    private readonly runner: TransactionRunner,
    @Inject(OUTBOX_EVENTS_OPTIONS) private readonly options: OutboxEventsOptions,
    @Inject(OUTBOX_EVENT_WRITER) private readonly writer: OutboxEventWriter,
    @Optional() @Inject(OUTBOX_TENANTS_OPTIONS) private readonly tenants: TenantsSetting = false,
  ) {
    runner.beforeCommit((attempt) => this.write(attempt));
  }

  /**
   * Emits one event; returns its `eventId` (UUIDv7). `schedule`: publish it no earlier than
   * `availableAt` or `delayMs` after the write (server time); see `EmitSchedule`.
   */
  emit(event: OutboxEventInput, schedule?: EmitSchedule): string;
  /** Emits several events, in this order; returns their `eventId`s. All or none are accepted. */
  emit(events: readonly OutboxEventInput[], schedule?: EmitSchedule): string[];
  emit(
    input: OutboxEventInput | readonly OutboxEventInput[],
    schedule?: EmitSchedule,
  ): string | string[] {
    const list: readonly OutboxEventInput[] = Array.isArray(input)
      ? input
      : [input as OutboxEventInput];
    const ids = this.emitEach(list.map((event) => ({ event, schedule })));
    return Array.isArray(input) ? ids : ids[0];
  }

  /**
   * Emits events each with its own schedule (what `@EmitsEvent` declared), all or none.
   * @internal used by the write side's bootstrap.
   */
  emitEach(entries: readonly ScheduledEmit[]): string[] {
    const eventType = entries[0]?.event?.eventType;
    const context = this.openContext(eventType);
    const target = this.target(`emit of ${String(eventType)}`);
    const now = Date.now();
    // Validate all first: one bad event rejects the whole call.
    const buffered: BufferedEvent[] = entries.map(({ event, schedule }) => ({
      row: rowOf(validateOutboxEvent(event, this.options), target?.tenant),
      schedule: this.allowed(validateSchedule(schedule, now)),
      ...(target ? { database: target.database } : {}),
    }));
    const buffer = this.emitted.get(context);
    if (buffer) buffer.push(...buffered);
    else this.emitted.set(context, buffered);
    return buffered.map(({ row }) => row.eventId);
  }

  /**
   * Cancels the scheduled event `eventId` in the running transaction (it takes effect if the
   * transaction commits): it succeeds while the event is pending and not yet due by the server's
   * clock. An event emitted earlier in the same transaction is dropped before it is written.
   * Never throws for the event's state: the result says what happened (`CancelScheduledResult`).
   */
  async cancel(eventId: string): Promise<CancelScheduledResult> {
    const context = this.openContext(undefined, eventId);
    const target = this.target(`cancel of ${eventId}`);
    const buffer = this.emitted.get(context) ?? [];
    const index = buffer.findIndex(({ row }) => row.eventId === eventId);
    if (index >= 0) {
      const { schedule } = buffer[index];
      if (schedule.availableAt === undefined && schedule.delayMs === undefined) {
        return { outcome: 'not-scheduled', eventId };
      }
      buffer.splice(index, 1);
      return { outcome: 'cancelled', eventId, alreadyCancelled: false };
    }
    return this.writer.cancel(eventId, context.session, target?.database);
  }

  /**
   * With tenants, the tenant of this call and its database (resolved now, so a call without one
   * throws `OutboxTenantNotResolvedError` before anything is buffered or written).
   */
  private target(what: string): TenantTarget | undefined {
    return this.tenants ? resolveTarget(this.tenants, `OutboxEmitter: ${what}`) : undefined;
  }

  private openContext(eventType?: string, cancelling?: string): OutboxTransactionContext {
    const context = this.runner.currentContext();
    if (!context) throw new OutboxTransactionRequiredError(eventType, cancelling);
    if (context.closed) throw new OutboxTransactionClosedError(eventType, cancelling);
    return context;
  }

  /** Refuses a schedule unless `scheduledEvents` is on. */
  private allowed(schedule: ScheduleRequest): ScheduleRequest {
    if (this.options.scheduledEvents) return schedule;
    if (schedule.availableAt !== undefined || schedule.delayMs !== undefined) {
      throw new InvalidScheduleError(
        schedule.delayMs !== undefined ? 'delayMs' : 'availableAt',
        'needs scheduled events turned on: OutboxModule.forRoot({ scheduledEvents: true }) (and OutboxTestingModule.forRoot({ scheduledEvents: true }) in tests)',
      );
    }
    return schedule;
  }

  /**
   * The attempt's events, scheduled (one read when needed), in one insert per database (one
   * without tenants; with tenants, one per tenant database the attempt emitted for, all in the
   * attempt's session).
   */
  private async write(attempt: OutboxTransactionContext): Promise<void> {
    const entries = this.emitted.get(attempt);
    if (!entries || entries.length === 0) return;
    for (const group of groupBy(entries, (entry) => entry.database ?? '').values()) {
      await this.writeTo(group[0].database, group, attempt);
    }
  }

  private async writeTo(
    database: string | undefined,
    entries: BufferedEvent[],
    attempt: OutboxTransactionContext,
  ): Promise<void> {
    const query = this.options.scheduledEvents ? scheduleQueryOf(entries) : undefined;
    const snapshot = query
      ? await this.writer.readSchedule(query, attempt.session, database)
      : { latest: new Map() };
    const rows = applySchedules(entries, snapshot);
    await this.writer.insert(
      rows,
      attempt.session,
      entries.map(({ schedule }) => schedule),
      database,
    );
  }
}

function rowOf(valid: OutboxEventInput, tenant: string | undefined): NewOutboxEvent {
  const headers = withEmitTraceContext(valid.headers);
  return {
    eventId: uuidv7(),
    eventType: valid.eventType,
    aggregateType: valid.aggregateType,
    aggregateId: valid.aggregateId,
    payload: valid.payload,
    ...(headers ? { headers } : {}),
    occurredAt: new Date(),
    slot: eventSlot(valid.aggregateType, valid.aggregateId),
    ...(tenant !== undefined ? { tenant } : {}),
    status: 'pending',
    attempts: 0,
  };
}
