import type { ClientSession, Connection } from 'mongoose';
import { OutboxError } from '../common/errors/outbox.error';

/**
 * The one place that touches a Mongoose internal. With `mongoose.set('transactionAsyncLocalStorage',
 * true)` (Mongoose 8.4+), `connection.transaction(fn)` runs `fn` inside an AsyncLocalStorage whose
 * store is `{ session }`, and every model call made inside picks that session up. The storage is the
 * Mongoose instance's `transactionAsyncLocalStorage` property, which Mongoose's typings do not
 * declare and no public API returns. The library reads it to see a transaction the app started with
 * `connection.transaction()`, and to give each connection's operations their own session.
 * `mongoose-transaction-storage.spec.ts` fails loudly when a Mongoose release changes it.
 */
interface MongooseWithStorage {
  transactionAsyncLocalStorage?: { getStore(): { session?: ClientSession } | undefined };
}

function storageOf(connection: Connection) {
  return (connection.base as unknown as MongooseWithStorage | undefined)
    ?.transactionAsyncLocalStorage;
}

/**
 * Switches Mongoose's transaction storage on for the connection's Mongoose instance (it is one per
 * instance, shared by all its connections). Returns true when this call switched it on. Throws when
 * the option no longer creates the storage, so a changed Mongoose fails at bootstrap, not later.
 */
export function enableTransactionStorage(connection: Connection): boolean {
  const mongoose = connection.base;
  const wasOn = Boolean(mongoose.get('transactionAsyncLocalStorage'));
  if (!wasOn) mongoose.set('transactionAsyncLocalStorage', true);
  const storage = storageOf(connection);
  if (typeof storage?.getStore !== 'function') {
    throw new OutboxError(
      "Mongoose's transactionAsyncLocalStorage option did not create the storage nestjs-outbox reads" +
        ' (mongoose.transactionAsyncLocalStorage). This Mongoose release changed it: use a mongoose' +
        ' version in the range of nestjs-outbox peerDependencies (^8.5.2 || ^9).',
      'OUTBOX_UNSUPPORTED_MONGOOSE',
      { mongooseVersion: (mongoose as { version?: string }).version },
    );
  }
  return !wasOn;
}

/**
 * The session Mongoose would give a model call made here: the session of the innermost
 * `connection.transaction()` running, of ANY connection of the same Mongoose instance (check
 * `isSessionOf`). Undefined outside a transaction or with the storage off.
 */
export function mongooseTransactionSession(connection: Connection): ClientSession | undefined {
  return storageOf(connection)?.getStore()?.session ?? undefined;
}

/** True when `session` was started by the client of `connection` (so operations on it may use it). */
export function isSessionOf(session: ClientSession, connection: Connection): boolean {
  const client = (session as unknown as { client?: unknown }).client;
  return client === undefined || client === connection.getClient();
}
