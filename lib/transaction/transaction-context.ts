import { AsyncLocalStorage } from 'node:async_hooks';
import type { ClientSession, Connection } from 'mongoose';
import type { NewOutboxEvent } from '../documents/outbox-event.document';

/**
 * One ATTEMPT of one transaction, as the outbox sees it. A new context (with an empty event
 * buffer) is made every time Mongoose (re)runs the transaction body, so a body retried after a
 * TransientTransactionError never writes the events of the failed attempt.
 */
export interface OutboxTransactionContext {
  readonly connection: Connection;
  readonly session: ClientSession;
  /** Events emitted so far in this attempt, inserted just before the body returns. */
  readonly events: NewOutboxEvent[];
  /** Set once the buffer was flushed: later emits would be lost, so they throw. */
  closed: boolean;
  /**
   * The context this one was started in (a transaction of another connection, or undefined):
   * inside a transaction of B nested in one of A, A's transaction is still running.
   */
  readonly outer?: OutboxTransactionContext;
}

/** The outbox's own AsyncLocalStorage (next to Mongoose's, which carries only the session). */
export const outboxTransactionStorage = new AsyncLocalStorage<OutboxTransactionContext>();

/**
 * The attempt context of `connection`'s innermost running transaction (possibly `closed`), walking
 * out through transactions of other connections nested in it; undefined when none runs.
 */
export function contextOf(connection: Connection): OutboxTransactionContext | undefined {
  for (let context = outboxTransactionStorage.getStore(); context; context = context.outer) {
    if (context.connection === connection) return context;
  }
  return undefined;
}
