import type { OutboxEventRecord } from '../../lib/documents/outbox-event.document';
import { ChangeSourceError } from '../../lib/relay/ports/change-source';
import type {
  ChangeCursor,
  ChangeSource,
  OutboxChange,
  ResumeToken,
} from '../../lib/relay/ports/change-source';
import type { SlotRange } from '../../lib/relay/ports/partition-layout';
import { contractEvent } from './support/contract-events';
import { contractCases } from './support/contract-cases';
import type { ContractSkips } from './support/contract-cases';

/** One implementation of `ChangeSource` on an empty outbox collection. */
export interface ChangeSourceFixture {
  /** The outbox's change stream; with `range`, one relay partition's. */
  source(range?: SlotRange): ChangeSource;
  /** Commits `events` (one insert each, in this order). */
  insert(events: readonly OutboxEventRecord[]): Promise<void>;
  /** A position the stream can never resume from (the oplog moved past it). */
  lostPosition(): Promise<ResumeToken>;
  /** Commits `events` without their commit reaching a majority yet (where it can be shown). */
  insertNotYetMajority?(events: readonly OutboxEventRecord[]): Promise<void>;
  /** Lets a majority-commit that is waiting happen. */
  reachMajority?(): Promise<void>;
  /** The server ends every open cursor (a stepdown: interrupted, not lost). */
  endCursors?(): Promise<void>;
  /** Drops the outbox collection (its streams are invalidated). */
  dropCollection?(): Promise<void>;
}

export const CHANGE_SOURCE_CASES = {
  inOrder:
    'delivers committed inserts in commit order, each with its document and a token, at most max per read',
  resume:
    'open(token) resumes just after that change; open(batch position) just after the batch’s last change',
  emptyPosition:
    'an idle read of a fresh stream answers an empty batch with a position; resuming from it delivers only later inserts',
  majority:
    'opened without a position, the stream delivers an insert committed before open that was not majority-committed yet',
  range: 'a stream with a slot range delivers only the inserts whose slot lies in it',
  lost: 'a position that can no longer be resumed fails open or the first next() as position-lost (MongoDB 286 ChangeStreamHistoryLost)',
  transient:
    'a cursor the server ends (stepdown, killed) fails next() as transient, never as position-lost',
  invalidate: 'dropping the outbox collection ends its stream as position-lost',
  close: 'close() resolves, also twice and after a failure',
} as const;

export type ChangeSourceCase = keyof typeof CHANGE_SOURCE_CASES;

/** Reads until `count` changes came (or `reads` reads): the changes and each read's position. */
async function collect(
  cursor: ChangeCursor,
  count: number,
  options: { max?: number; reads?: number } = {},
): Promise<{ changes: OutboxChange[]; positions: ResumeToken[]; sizes: number[] }> {
  const changes: OutboxChange[] = [];
  const positions: ResumeToken[] = [];
  const sizes: number[] = [];
  for (let read = 0; read < (options.reads ?? 40) && changes.length < count; read++) {
    const batch = await cursor.next(options.max ?? 10);
    changes.push(...batch.changes);
    sizes.push(batch.changes.length);
    positions.push(batch.position);
  }
  return { changes, positions, sizes };
}

/** The error of the first failing call among opening and a few reads (undefined: none failed). */
async function failureOf(source: ChangeSource, from: ResumeToken): Promise<unknown> {
  let cursor: ChangeCursor | undefined;
  try {
    cursor = await source.open(from);
    for (let read = 0; read < 5; read++) await cursor.next(10);
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await cursor?.close();
  }
}

const eventIds = (changes: OutboxChange[]): string[] => changes.map((c) => c.event.eventId);

/** The contract of `ChangeSource` (lib/relay/ports/change-source.ts). */
export function changeSourceContract(
  fixture: () => Promise<ChangeSourceFixture>,
  skips: ContractSkips<ChangeSourceCase> = {},
): void {
  const test = contractCases(CHANGE_SOURCE_CASES, skips);
  let f: ChangeSourceFixture;
  const cursors: ChangeCursor[] = [];
  const open = async (source: ChangeSource, from?: ResumeToken): Promise<ChangeCursor> => {
    const cursor = await source.open(from);
    cursors.push(cursor);
    return cursor;
  };
  beforeEach(async () => {
    f = await fixture();
  });
  afterEach(async () => {
    for (const cursor of cursors.splice(0)) await cursor.close();
  });

  test('inOrder', async () => {
    const cursor = await open(f.source());
    const events = ['o1', 'o2', 'o1', 'o3', 'o1'].map((id) => contractEvent(id));
    await f.insert(events);
    const { changes, sizes } = await collect(cursor, events.length, { max: 2 });
    expect(eventIds(changes)).toEqual(events.map((e) => e.eventId));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(2);
    expect(changes[3].event).toMatchObject({
      _id: events[3]._id,
      aggregateId: 'o3',
      payload: events[3].payload,
      status: 'pending',
      slot: events[3].slot,
    });
    for (const change of changes) expect(change.token).toBeDefined();
  });

  test('resume', async () => {
    const cursor = await open(f.source());
    const events = ['r1', 'r2', 'r3', 'r4'].map((id) => contractEvent(id));
    await f.insert(events.slice(0, 2));
    const first = await collect(cursor, 2);
    await f.insert(events.slice(2));
    const { changes } = await collect(cursor, 2);
    expect(eventIds([...first.changes, ...changes])).toEqual(events.map((e) => e.eventId));
    const afterSecond = await open(f.source(), first.changes[1].token);
    expect(eventIds((await collect(afterSecond, 2)).changes)).toEqual(
      events.slice(2).map((e) => e.eventId),
    );
    const afterFirst = await open(f.source(), first.changes[0].token);
    expect(eventIds((await collect(afterFirst, 3)).changes)).toEqual(
      events.slice(1).map((e) => e.eventId),
    );
    const lastPosition = first.positions[first.positions.length - 1];
    const afterBatch = await open(f.source(), lastPosition);
    expect(eventIds((await collect(afterBatch, 2)).changes)).toEqual(
      events.slice(2).map((e) => e.eventId),
    );
  });

  test('emptyPosition', async () => {
    const cursor = await open(f.source());
    const idle = await cursor.next(10);
    expect(idle.changes).toEqual([]);
    expect(idle.position).toBeDefined();
    const later = contractEvent('e1');
    await f.insert([later]);
    const resumed = await open(f.source(), idle.position);
    expect(eventIds((await collect(resumed, 1)).changes)).toEqual([later.eventId]);
  });

  test('majority', async () => {
    const early = contractEvent('m1');
    await f.insertNotYetMajority!([early]);
    const cursor = await open(f.source());
    await f.reachMajority!();
    const after = contractEvent('m2');
    await f.insert([after]);
    expect(eventIds((await collect(cursor, 2)).changes)).toEqual([early.eventId, after.eventId]);
  });

  test('range', async () => {
    const first = contractEvent('in');
    const slot = first.slot as number;
    const outside = () => contractEvent('out', { slot: (slot + 7) % 4096 });
    const second = contractEvent('in');
    const cursor = await open(f.source({ from: slot, to: slot + 1 }));
    await f.insert([outside(), first, outside(), second]);
    const { changes } = await collect(cursor, 2, { reads: 6 });
    expect(eventIds(changes)).toEqual([first.eventId, second.eventId]);
  });

  test('lost', async () => {
    const failure = await failureOf(f.source(), await f.lostPosition());
    expect(failure).toBeInstanceOf(ChangeSourceError);
    expect((failure as ChangeSourceError).kind).toBe('position-lost');
  });

  test('transient', async () => {
    const cursor = await open(f.source());
    const reading = cursor.next(10).then(
      () => undefined,
      (error: unknown) => error,
    );
    await f.endCursors!();
    let failure = await reading;
    for (let read = 0; read < 5 && !failure; read++) {
      failure = await cursor.next(10).then(
        () => undefined,
        (error: unknown) => error,
      );
    }
    expect(failure).toBeInstanceOf(Error);
    if (failure instanceof ChangeSourceError) expect(failure.kind).toBe('transient');
  });

  test('invalidate', async () => {
    await f.insert([contractEvent('i1')]);
    const cursor = await open(f.source());
    await f.dropCollection!();
    let failure: unknown;
    for (let read = 0; read < 40 && !failure; read++) {
      failure = await cursor.next(10).then(
        () => undefined,
        (error: unknown) => error,
      );
    }
    expect(failure).toBeInstanceOf(ChangeSourceError);
    expect((failure as ChangeSourceError).kind).toBe('position-lost');
  });

  test('close', async () => {
    const cursor = await f.source().open(undefined);
    await f.insert([contractEvent('c1')]);
    await collect(cursor, 1);
    await expect(cursor.close()).resolves.toBeUndefined();
    await expect(cursor.close()).resolves.toBeUndefined();
    const lost = await f
      .source()
      .open(await f.lostPosition())
      .catch(() => undefined);
    if (lost) {
      await lost.next(10).catch(() => undefined);
      await expect(lost.close()).resolves.toBeUndefined();
    }
  });
}
