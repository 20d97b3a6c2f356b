import { AsyncLocalStorage } from 'node:async_hooks';
import { Mongoose } from 'mongoose';
import type { ClientSession } from 'mongoose';
import { QUERY_OPERATIONS } from './connection-session.plugin';
import {
  enableTransactionStorage,
  isSessionOf,
  mongooseTransactionSession,
} from './mongoose-transaction-storage';

/**
 * The Mongoose internals the library relies on, checked against the installed Mongoose: when a
 * release changes them, these tests fail here instead of transactions silently losing their session.
 * (test/write-side/two-connections.e2e-spec.ts checks the same against a server.)
 */
describe("Mongoose's transaction storage (an internal)", () => {
  it('is an AsyncLocalStorage on the Mongoose instance once the option is on', () => {
    const mongoose = new Mongoose();
    const connection = mongoose.createConnection();
    expect(enableTransactionStorage(connection)).toBe(true);
    expect(mongoose.get('transactionAsyncLocalStorage')).toBe(true);
    expect(
      (mongoose as unknown as Record<string, unknown>).transactionAsyncLocalStorage,
    ).toBeInstanceOf(AsyncLocalStorage);
    expect(enableTransactionStorage(connection)).toBe(false); // already on: nothing to do
  });

  it('holds { session } inside a transaction; read through the one accessor', () => {
    const mongoose = new Mongoose();
    const connection = mongoose.createConnection();
    enableTransactionStorage(connection);
    const storage = (
      mongoose as unknown as { transactionAsyncLocalStorage: AsyncLocalStorage<object> }
    ).transactionAsyncLocalStorage;
    const session = { client: connection.getClient() } as unknown as ClientSession;
    expect(mongooseTransactionSession(connection)).toBeUndefined();
    storage.run({ session }, () => {
      expect(mongooseTransactionSession(connection)).toBe(session);
      expect(isSessionOf(session, connection)).toBe(true);
      expect(isSessionOf({ client: {} } as unknown as ClientSession, connection)).toBe(false);
    });
  });

  it('fails the bootstrap loudly when the option no longer creates the storage', () => {
    const settings = new Map<string, unknown>();
    const changed = {
      base: {
        get: (k: string) => settings.get(k),
        set: (k: string, v: unknown) => settings.set(k, v),
      },
    };
    expect(() => enableTransactionStorage(changed as never)).toThrow(
      /did not create the storage nestjs-outbox reads.*\^8\.5\.2 \|\| \^9/,
    );
  });

  it("the plugin's query operations are Mongoose's", () => {
    const constants = require('mongoose/lib/constants') as { queryOperations: readonly string[] };
    expect([...QUERY_OPERATIONS].sort()).toEqual([...constants.queryOperations].sort());
  });
});
