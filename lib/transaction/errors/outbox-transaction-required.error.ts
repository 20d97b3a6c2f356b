import { OutboxError } from '../../common/errors/outbox.error';

/**
 * An event was emitted (or a scheduled one cancelled) outside a transaction. Outbox rows are
 * written only in the transaction of the data they describe; otherwise "event iff commit" could
 * not hold.
 */
export class OutboxTransactionRequiredError extends OutboxError {
  constructor(eventType?: string, cancelledEventId?: string) {
    const what =
      cancelledEventId !== undefined
        ? `cancel event ${cancelledEventId}`
        : `emit${eventType ? ` event '${eventType}'` : ' events'}`;
    const call = cancelledEventId !== undefined ? 'OutboxEmitter.cancel()' : 'OutboxEmitter.emit()';
    super(
      `Cannot ${what} outside a transaction.` +
        ` Call ${call} from a method decorated with @Transactional() (or @EmitsEvent),` +
        ' or inside TransactionRunner.run(...).',
      'OUTBOX_TRANSACTION_REQUIRED',
      { eventType, ...(cancelledEventId !== undefined ? { eventId: cancelledEventId } : {}) },
    );
  }
}
