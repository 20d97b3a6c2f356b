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
  return (await primaryHello(db)).localTime;
}

async function primaryHello(db: mongo.Db): Promise<mongo.Document & { localTime: Date }> {
  const hello = await db.command({ hello: 1 }, { readPreference: mongo.ReadPreference.primary });
  if (!((hello.localTime as unknown) instanceof Date))
    throw new Error('the server did not report its time (hello.localTime)');
  return hello as mongo.Document & { localTime: Date };
}

/**
 * A time on the primary's clock by which every write is majority-committed: the earlier of
 * `hello.localTime` ("the local server time in UTC") and `hello.lastWrite.majorityWriteDate`
 * ("the time of the last write operation readable by majority reads"), both from the primary's
 * `hello` (https://www.mongodb.com/docs/manual/reference/command/hello/#mongodb-data-hello.localTime,
 * https://www.mongodb.com/docs/manual/reference/command/hello/#mongodb-data-hello.lastWrite.majorityWriteDate).
 * A write committed on the primary at or before it is in the majority-committed view, so a read
 * at read concern "majority" made after this resolves sees it
 * (https://www.mongodb.com/docs/manual/reference/read-concern-majority/). The due reader
 * publishes by this time, not by `localTime`: a cancellation committed on the primary before an
 * event's due time but majority-committed only after it would otherwise be invisible to the
 * majority reads that publish the event.
 *
 * On an idle deployment the majority point still moves on: the primary writes a no-op to the
 * oplog when nothing else was written for `periodicNoopIntervalSecs` (10 s by default,
 * https://www.mongodb.com/docs/manual/reference/parameters/#mongodb-parameter-param.periodicNoopIntervalSecs),
 * and the relay's own lease renewals are majority writes; a due event then waits at most until
 * the next one.
 *
 * Without `lastWrite` (the docs list it in the output of replica set members only), or without
 * its `majorityWriteDate`, this is `localTime`: the server reports no majority commit point to
 * wait for (a standalone `mongod` has none; every write there is as committed as it gets), and
 * the due reader publishes by the primary's clock (elsewhere a cancellation still replicating
 * at the due time may then lose the race).
 */
export async function majorityTime(db: mongo.Db): Promise<Date> {
  const { localTime, lastWrite } = await primaryHello(db);
  const majority = (lastWrite as { majorityWriteDate?: unknown } | undefined)?.majorityWriteDate;
  if (!(majority instanceof Date)) return localTime;
  return majority.getTime() < localTime.getTime() ? majority : localTime;
}

/** The `_id` of the document of `majorityWriteTime` in the relay state collection. */
export const DUE_CLOCK_ID = 'due-clock';

/**
 * How long `majorityWriteTime` waits for its write to be majority-committed, ms (`wtimeout`).
 * Without a majority (secondaries down or lagging), a `w: "majority"` write waits with no end;
 * with it, the server answers a write concern error after this long ("even if the required
 * write concern will eventually succeed", and the write itself is not undone:
 * https://www.mongodb.com/docs/manual/reference/write-concern/#wtimeout). The due reader's pass
 * then fails and is retried after its back-off, and a stop waits for that pass no longer than
 * this. The bound of the due reader's recheck (5 s): a pass never waits longer than the next
 * would come.
 */
export const MAJORITY_WRITE_TIME_WTIMEOUT_MS = 5_000;

/**
 * A time on the primary's clock, in milliseconds, by which every write is majority-committed:
 * the primary's `hello.localTime`, read first, then a write with `w: "majority"` to one document
 * of `state` (the relay state collection). That write comes after every write committed by that
 * time in the primary's oplog, and its acknowledgement waits until it is majority-committed, so
 * they are too (https://www.mongodb.com/docs/manual/reference/write-concern/#mongodb-writeconcern-writeconcern.-majority-):
 * a cancellation committed on that primary by then is seen by the majority reads made after.
 * It is what `majorityWriteDate` cannot give: that one is in whole seconds and moves only with
 * writes. (Not `$$NOW` in an update pipeline: the same guarantee, and PoppyDB has no pipeline
 * `findAndModify`.) Bounded by `MAJORITY_WRITE_TIME_WTIMEOUT_MS`: without a majority it throws.
 */
export async function majorityWriteTime(
  db: mongo.Db,
  state: mongo.Collection<{ _id: string }>,
): Promise<Date> {
  const { localTime } = await primaryHello(db);
  await state.updateOne(
    { _id: DUE_CLOCK_ID },
    { $set: { at: localTime }, $inc: { writes: 1 } },
    { upsert: true, writeConcern: { w: 'majority', wtimeoutMS: MAJORITY_WRITE_TIME_WTIMEOUT_MS } },
  );
  return localTime;
}
