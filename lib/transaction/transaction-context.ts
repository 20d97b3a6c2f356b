import { AsyncLocalStorage } from 'node:async_hooks';
import type { ClientSession, Connection } from 'mongoose';

/**
 * One ATTEMPT of one transaction, as the outbox sees it. A new context is made every time
 * Mongoose (re)runs the transaction body, so what the layers above keep per attempt (the events
 * emitted in it) starts empty again when a body is retried after a TransientTransactionError.
 */
export interface OutboxTransactionContext {
  readonly connection: Connection;
  readonly session: ClientSession;
  /** Set once the before-commit hooks ran: later emits would be lost, so they throw. */
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
