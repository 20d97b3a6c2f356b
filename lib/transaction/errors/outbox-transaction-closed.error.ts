import { OutboxError } from '../../common/errors/outbox.error';

/**
 * An event was emitted after its transaction body had returned (e.g. from a promise nobody
 * awaited): the outbox rows were already written, so the event would be lost.
 */
export class OutboxTransactionClosedError extends OutboxError {
  constructor(eventType?: string) {
    super(
      `Cannot emit${eventType ? ` event '${eventType}'` : ' an event'}: its transaction body already returned,` +
        ' so the event would be lost. Await every call that emits before the @Transactional() method returns.',
      'OUTBOX_TRANSACTION_CLOSED',
      { eventType },
    );
  }
}
