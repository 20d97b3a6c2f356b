import { mongo } from 'mongoose';
import { ChangeSourceError } from '../ports/change-source';
import type { ChangeSourceFailure } from '../ports/change-source';
import { MongoChangeSource } from './mongo-change.source';
import type { OutboxDoc } from '../../documents/outbox-event.document';

/**
 * How `MongoChangeSource` classifies the driver's errors, without a server: the change stream
 * contract (test/contracts) shows a lost position on the test server only as the server reports
 * it, and cannot make a server answer each code on demand. A read of the stream is scripted: it
 * answers a change, nothing, or the driver's error.
 */
type Read = { change: unknown } | { error: unknown };

function scriptedOutbox(reads: Read[]): mongo.Collection<OutboxDoc> {
  const stream = {
    closed: false,
    resumeToken: undefined,
    tryNext: async (): Promise<unknown> => {
      const read = reads.shift();
      // Nothing scripted: an idle getMore (the server waits maxAwaitTimeMS).
      if (!read) return new Promise((resolve) => setTimeout(() => resolve(null), 5));
      if ('error' in read) throw read.error;
      return read.change;
    },
    close: async (): Promise<void> => {
      stream.closed = true;
    },
  };
  return {
    watch: () => stream,
    dbName: 'shop',
    collectionName: 'outbox',
  } as unknown as mongo.Collection<OutboxDoc>;
}

const serverError = (code: number, codeName: string) =>
  new mongo.MongoServerError({ errmsg: `${codeName} from the server`, code, codeName });

const insert = (n: number, ns = { db: 'shop', coll: 'outbox' }) => ({
  _id: { _data: `token-${n}` },
  operationType: 'insert',
  ns,
  fullDocument: { _id: `event-${n}`, eventId: `event-${n}`, status: 'pending' },
});

const source = (reads: Read[]) =>
  new MongoChangeSource(scriptedOutbox(reads), { batchSize: 10, idleMs: 20 });

async function kindOf(failure: Promise<unknown>): Promise<ChangeSourceFailure | 'none'> {
  try {
    await failure;
    return 'none';
  } catch (error) {
    expect(error).toBeInstanceOf(ChangeSourceError);
    return (error as ChangeSourceError).kind;
  }
}

describe('MongoChangeSource: the driver errors it classifies', () => {
  const lost: Array<[number, string]> = [
    [286, 'ChangeStreamHistoryLost'],
    [280, 'ChangeStreamFatalError'],
    [260, 'InvalidResumeToken'],
  ];

  it.each(lost)(
    'opening at a token the server answers with %i (%s) fails as position-lost',
    async (code, name) => {
      const opening = source([{ error: serverError(code, name) }]).open({ _data: 'old' });
      expect(await kindOf(opening)).toBe('position-lost');
    },
  );

  it.each(lost)(
    'a read the server answers with %i (%s) fails next() as position-lost',
    async (code, name) => {
      const cursor = await source([{ change: insert(1) }, { error: serverError(code, name) }]).open(
        { _data: 'old' },
      );
      const first = await cursor.next(10);
      expect(first.changes.map((change) => change.event.eventId)).toEqual(['event-1']);
      expect(await kindOf(cursor.next(10))).toBe('position-lost');
      await cursor.close();
    },
  );

  it('a stepdown, a killed cursor or a network error fails next() as transient, never as position-lost', async () => {
    for (const error of [
      serverError(11602, 'InterruptedDueToReplStateChange'),
      serverError(237, 'CursorKilled'),
      new mongo.MongoNetworkError('connection reset'),
    ]) {
      const cursor = await source([{ change: null }, { error }]).open({ _data: 'old' });
      let kind = await kindOf(cursor.next(10));
      for (let read = 0; read < 5 && kind === 'none'; read++) kind = await kindOf(cursor.next(10));
      expect(kind).toBe('transient');
      await cursor.close();
    }
  });
});

describe('MongoChangeSource: what it keeps of what the server sends', () => {
  it("keeps only its own collection's inserts, whatever the server's filter let through", async () => {
    // PoppyDB's change streams apply only the operationType of a $match of several fields: a
    // relay state document of another collection came through and was taken for an event.
    const cursor = await source([
      { change: insert(1, { db: 'shop', coll: 'outbox_relay_state' }) },
      { change: insert(2, { db: 'other', coll: 'outbox' }) },
      { change: insert(3) },
    ]).open({ _data: 'old' });
    const ids: string[] = [];
    try {
      for (let read = 0; read < 10 && ids.length === 0; read++) {
        ids.push(...(await cursor.next(10)).changes.map((change) => change.event.eventId));
      }
    } finally {
      await cursor.close();
    }
    expect(ids).toEqual(['event-3']);
  });
});
