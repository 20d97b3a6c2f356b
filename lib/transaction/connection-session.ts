import type { ClientSession, Connection } from 'mongoose';
import { isSessionOf, mongooseTransactionSession } from './mongoose-transaction-storage';
import { contextOf } from './transaction-context';

/**
 * The session an operation on `connection` must use, when Mongoose's storage (one per Mongoose
 * instance, shared by all its connections) holds the session of ANOTHER connection's transaction,
 * which the driver would reject ('ClientSession must be from the same MongoClient'):
 * - the session of `connection`'s own transaction when one runs around this call (a transaction of
 *   connection A, with one of B nested in it: A's models still write in A's transaction);
 * - otherwise `null`: no session, the operation runs outside any transaction, as it would if the
 *   storage were off.
 * Undefined when Mongoose's own choice is right (no transaction, or one of `connection`).
 */
export function sessionForConnection(connection: Connection): ClientSession | null | undefined {
  const session = mongooseTransactionSession(connection);
  if (!session || isSessionOf(session, connection)) return undefined;
  const own = contextOf(connection);
  return own && !own.closed ? own.session : null;
}
