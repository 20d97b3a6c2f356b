import { OutboxError } from '../../common/errors/outbox.error';

/**
 * An event was emitted outside a transaction. Outbox rows are written only in the transaction of
 * the data they describe; otherwise "event iff commit" could not hold.
 */
export class OutboxTransactionRequiredError extends OutboxError {
  constructor(eventType?: string) {
    super(
      `Cannot emit${eventType ? ` event '${eventType}'` : ' events'} outside a transaction.` +
        ' Call OutboxEmitter.emit() from a method decorated with @Transactional() (or @EmitsEvent),' +
        ' or inside TransactionRunner.run(...).',
      'OUTBOX_TRANSACTION_REQUIRED',
      { eventType },
    );
  }
}
