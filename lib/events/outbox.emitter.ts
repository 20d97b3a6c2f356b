import { Inject, Injectable } from '@nestjs/common';
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
import { OUTBOX_EVENT_WRITER } from './outbox-event.writer';
import type { OutboxEventWriter } from './outbox-event.writer';

/**
 * Emits events decided in a method body. Must be called inside a transaction (a `@Transactional()`
 * method or `TransactionRunner.run()`); the events are inserted into the outbox in that
 * transaction, with one `insertMany` in its session by the before-commit hook the emitter
 * registers on the runner. Synchronous on purpose: a bad event throws right here, inside the
 * transaction, which then rolls back; nothing can be forgotten un-awaited.
 */
@Injectable()
export class OutboxEmitter {
  /** The events emitted in each attempt (a retried body starts with none). */
  private readonly emitted = new WeakMap<OutboxTransactionContext, NewOutboxEvent[]>();

  constructor(
    private readonly runner: TransactionRunner,
    @Inject(OUTBOX_EVENTS_OPTIONS) private readonly options: OutboxEventsOptions,
    @Inject(OUTBOX_EVENT_WRITER) writer: OutboxEventWriter,
  ) {
    runner.beforeCommit(async (attempt) => {
      const events = this.emitted.get(attempt);
      if (events && events.length > 0) await writer.insert(events, attempt.session);
    });
  }

  /** Emits one event; returns its `eventId` (UUIDv7). */
  emit(event: OutboxEventInput): string;
  /** Emits several events, in this order; returns their `eventId`s. All or none are accepted. */
  emit(events: readonly OutboxEventInput[]): string[];
  emit(input: OutboxEventInput | readonly OutboxEventInput[]): string | string[] {
    const list: readonly OutboxEventInput[] = Array.isArray(input)
      ? input
      : [input as OutboxEventInput];
    const context = this.runner.currentContext();
    if (!context) {
      throw new OutboxTransactionRequiredError(list[0]?.eventType);
    }
    if (context.closed) {
      throw new OutboxTransactionClosedError(list[0]?.eventType);
    }
    const limits = {
      maxPayloadBytes: this.options.maxPayloadBytes,
      allowBigInt: this.options.allowBigInt,
    };
    // Validate all first: one bad event rejects the whole call.
    const rows: NewOutboxEvent[] = list.map((event) => {
      const valid = validateOutboxEvent(event, limits);
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
        status: 'pending',
        attempts: 0,
      };
    });
    const buffer = this.emitted.get(context);
    if (buffer) buffer.push(...rows);
    else this.emitted.set(context, rows);
    const ids = rows.map((row) => row.eventId);
    return Array.isArray(input) ? ids : ids[0];
  }
}
