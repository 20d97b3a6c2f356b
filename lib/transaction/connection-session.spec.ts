import { AsyncLocalStorage } from 'node:async_hooks';
import type { ClientSession, Connection } from 'mongoose';
import { sessionForConnection } from './connection-session.plugin';
import { outboxTransactionStorage, type OutboxTransactionContext } from './transaction-context';

/**
 * Mongoose keeps one transaction storage per Mongoose instance, shared by its connections. Which
 * session must an operation of connection B use while connection A's transaction is in it?
 */
const storage = new AsyncLocalStorage<{ session: ClientSession }>();
const base = { transactionAsyncLocalStorage: storage };
const clientA = { name: 'A' };
const clientB = { name: 'B' };
const a = { base, getClient: () => clientA } as unknown as Connection;
const b = { base, getClient: () => clientB } as unknown as Connection;
const sessionOf = (client: object) =>
  ({ client, inTransaction: () => true }) as unknown as ClientSession;
const sessionA = sessionOf(clientA);
const sessionB = sessionOf(clientB);

function inTransaction<T>(
  connection: Connection,
  session: ClientSession,
  fn: () => T,
  closed = false,
): T {
  const context: OutboxTransactionContext = {
    connection,
    session,
    closed,
    outer: outboxTransactionStorage.getStore(),
  };
  return outboxTransactionStorage.run(context, () => storage.run({ session }, fn));
}

describe('the session of an operation, per connection', () => {
  it("outside any transaction: Mongoose's choice stands (nothing to change)", () => {
    expect(sessionForConnection(a)).toBeUndefined();
    expect(sessionForConnection(b)).toBeUndefined();
  });

  it("inside A's transaction: A's operations keep A's session; B's run without a session", () => {
    inTransaction(a, sessionA, () => {
      expect(sessionForConnection(a)).toBeUndefined();
      expect(sessionForConnection(b)).toBeNull();
    });
  });

  it("B's transaction nested in A's: B's operations use B's session, A's still use A's", () => {
    inTransaction(a, sessionA, () =>
      inTransaction(b, sessionB, () => {
        expect(sessionForConnection(b)).toBeUndefined();
        expect(sessionForConnection(a)).toBe(sessionA);
      }),
    );
  });

  it("a transaction of B whose body already returned is not B's current one", () => {
    inTransaction(
      b,
      sessionB,
      () => inTransaction(a, sessionA, () => expect(sessionForConnection(b)).toBeNull()),
      true,
    );
  });

  it('a transaction the app started itself with connection.transaction() counts as its own', () => {
    storage.run({ session: sessionA }, () => {
      expect(sessionForConnection(a)).toBeUndefined();
      expect(sessionForConnection(b)).toBeNull();
    });
  });
});
