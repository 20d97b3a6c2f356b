import mongoose from 'mongoose';
import type { Connection } from 'mongoose';
import { mongoUriFor, uniqueName } from './servers';

/**
 * A connection to a fresh database for the enclosing suite: opened in `beforeAll` (then handed to
 * `opened`), dropped and closed in `afterAll`.
 */
export function suiteDatabase(prefix: string, opened: (connection: Connection) => void): void {
  let connection: Connection | undefined;
  beforeAll(async () => {
    connection = await mongoose.createConnection(mongoUriFor(uniqueName(prefix))).asPromise();
    opened(connection);
  });
  afterAll(async () => {
    await connection?.dropDatabase().catch(() => undefined);
    await connection?.close();
  });
}
