import type { Connection } from 'mongoose';

/**
 * The connection to `database` on the same client as `connection` (Mongoose's `useDb`, cached:
 * one per database name, sharing the client's pool, so a session of `connection` works there and
 * one transaction may span the app's and the tenant's databases). `connection` itself when
 * `database` is undefined or is its own database.
 */
export function tenantConnection(connection: Connection, database: string | undefined): Connection {
  if (database === undefined || database === connection.name) return connection;
  return connection.useDb(database, { useCache: true });
}
