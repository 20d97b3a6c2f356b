import { OutboxError } from '../../common/errors/outbox.error';

/**
 * An event was emitted (or a scheduled one cancelled) after its transaction body had returned
 * (e.g. from a promise nobody awaited): the outbox rows were already written, so the event would
 * be lost.
 */
export class OutboxTransactionClosedError extends OutboxError {
  constructor(eventType?: string, cancelledEventId?: string) {
    const what =
      cancelledEventId !== undefined
        ? `cancel event ${cancelledEventId}`
        : `emit${eventType ? ` event '${eventType}'` : ' an event'}`;
    super(
      `Cannot ${what}: its transaction body already returned,` +
        ` so ${cancelledEventId !== undefined ? 'the cancel' : 'the event'} would be lost.` +
        ' Await every call that emits or cancels before the @Transactional() method returns.',
      'OUTBOX_TRANSACTION_CLOSED',
      { eventType, ...(cancelledEventId !== undefined ? { eventId: cancelledEventId } : {}) },
    );
  }
}
