import type { Connection } from 'mongoose';
import { describeWith, suiteDatabase, testServers, uniqueName } from '../harness';

/** What the library relies on from MongoDB, proved against the server of this run. */
describeWith(['mongodb'], 'MongoDB substrate', () => {
  let conn: Connection;

  suiteDatabase('substrate', (opened) => (conn = opened));

  it('reports which server the suite talks to', () => {
    expect(['mongodb', 'poppydb']).toContain(testServers().mongoKind);
  });

  it('a committed transaction inserts into two collections', async () => {
    const a = conn.collection(uniqueName('a'));
    const b = conn.collection(uniqueName('b'));
    await conn.createCollection(a.collectionName);
    await conn.createCollection(b.collectionName);
    const session = await conn.startSession();
    try {
      await session.withTransaction(async () => {
        await a.insertOne({ n: 1 }, { session });
        await b.insertOne({ n: 2 }, { session });
      });
    } finally {
      await session.endSession();
    }
    expect(await a.countDocuments()).toBe(1);
    expect(await b.countDocuments()).toBe(1);
  });

  it('an aborted transaction leaves neither collection written', async () => {
    const a = conn.collection(uniqueName('a'));
    const b = conn.collection(uniqueName('b'));
    await conn.createCollection(a.collectionName);
    await conn.createCollection(b.collectionName);
    const session = await conn.startSession();
    const boom = new Error('abort me');
    try {
      await expect(
        session.withTransaction(async () => {
          await a.insertOne({ n: 1 }, { session });
          await b.insertOne({ n: 2 }, { session });
          throw boom;
        }),
      ).rejects.toBe(boom);
    } finally {
      await session.endSession();
    }
    expect(await a.countDocuments()).toBe(0);
    expect(await b.countDocuments()).toBe(0);
  });

  it('a change stream delivers inserts with fullDocument, and resumes after its last token', async () => {
    const col = conn.collection(uniqueName('cs'));
    await conn.createCollection(col.collectionName);
    const pipeline = [{ $match: { operationType: 'insert' } }];

    const first = col.watch(pipeline);
    const received = first.next();
    // Give the server a moment to open the cursor before the insert.
    await new Promise((r) => setTimeout(r, 300));
    await col.insertOne({ n: 1 });
    const change = (await received) as any;
    expect(change.operationType).toBe('insert');
    expect(change.fullDocument).toMatchObject({ n: 1 });
    const token = first.resumeToken;
    await first.close();

    await col.insertMany([{ n: 2 }, { n: 3 }]);

    const resumed = col.watch(pipeline, { resumeAfter: token });
    const seen: number[] = [];
    for (let i = 0; i < 2; i++) seen.push(((await resumed.next()) as any).fullDocument.n);
    expect(seen).toEqual([2, 3]);
    // Nothing else is pending: the next insert is the next event.
    await col.insertOne({ n: 4 });
    expect(((await resumed.next()) as any).fullDocument.n).toBe(4);
    await resumed.close();
  });

  it('a unique index violation surfaces as duplicate-key error 11000', async () => {
    const col = conn.collection(uniqueName('uniq'));
    await col.createIndex({ key: 1 }, { unique: true });
    await col.insertOne({ key: 'k' });
    await expect(col.insertOne({ key: 'k' })).rejects.toMatchObject({ code: 11000 });
  });
});
