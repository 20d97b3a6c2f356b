import { mongo } from 'mongoose';

/**
 * How the relay reaches its collections, whatever the app's connection string says
 * (`readPreference=secondaryPreferred`, `w=1`, `readConcern=local`...):
 * - reads from the primary at read concern "majority": the relay sees only writes that can no
 *   longer be rolled back, so it never publishes an event of a transaction a failover undoes
 *   (https://www.mongodb.com/docs/manual/reference/read-concern-majority/), and it sees every
 *   insert the change stream announced (change streams only return majority-committed changes:
 *   https://www.mongodb.com/docs/manual/changeStreams/#availability);
 * - writes with `w: 'majority'`: an acknowledged lease, checkpoint or mark survives a failover
 *   (https://www.mongodb.com/docs/manual/reference/write-concern/#mongodb-writeconcern-writeconcern.-majority-).
 */
export const RELAY_COLLECTION_OPTIONS: mongo.CollectionOptions = {
  readPreference: mongo.ReadPreference.primary,
  readConcern: { level: 'majority' },
  writeConcern: { w: 'majority' },
};

export function relayCollection<T extends mongo.Document>(
  db: mongo.Db,
  name: string,
): mongo.Collection<T> {
  return db.collection<T>(name, RELAY_COLLECTION_OPTIONS);
}

/**
 * `hello.localTime` of the primary: "the local server time in UTC"
 * (https://www.mongodb.com/docs/manual/reference/command/hello/#mongodb-data-hello.localTime).
 * Read before the writes that compare with it: a lease expired at it is expired when they apply.
 */
export async function serverTime(db: mongo.Db): Promise<Date> {
  const hello = await db.command({ hello: 1 }, { readPreference: mongo.ReadPreference.primary });
  const time = hello.localTime as unknown;
  if (!(time instanceof Date))
    throw new Error('the server did not report its time (hello.localTime)');
  return time;
}
