import { SimRandom } from '../core/sim.random';
import { SimChangeStreams } from './sim-change-streams';
import type { CursorAnswer } from './sim-change-streams';
import { databaseWorld, outboxDoc } from '../support/world.fixtures';

function streamsWorld(options: { lagMs?: number; windowMs?: number } = {}) {
  const world = databaseWorld(options);
  const streams = new SimChangeStreams(world.scheduler, world.db, world.history, new SimRandom(1));
  const read = (id: number): Promise<CursorAnswer> =>
    new Promise((resolve) => streams.read(id, 10, 100, resolve));
  return { ...world, streams, read };
}

function opened(answer: ReturnType<SimChangeStreams['openCursor']>): number {
  if (!('id' in answer)) throw new Error('expected an open cursor');
  return answer.id;
}

describe('SimChangeStreams (the outbox change stream)', () => {
  it('opened without a position, starts at the majority commit point: a commit applied but not yet majority-committed is delivered', async () => {
    // MongoDB's bare watch() would start after the last applied operation and skip `before`;
    // the relay's adapter opens at hello.lastWrite.majorityOpTime, which the port promises.
    const { db, streams, read, until } = streamsWorld({ lagMs: 50 });
    const before = outboxDoc('A');
    db.commit([before]);
    const id = opened(streams.openCursor(undefined));
    const after = outboxDoc('A');
    db.commit([after]);
    const seen: string[] = [];
    for (let i = 0; i < 2; i++) {
      const answer = read(id);
      await until(200 * (i + 1));
      const result = await answer;
      if (result.ok) seen.push(...result.changes.map((change) => change.doc.eventId));
    }
    expect(seen).toEqual([before.eventId, after.eventId]);
  });

  it('waits up to the idle time, then answers empty with the post-batch position', async () => {
    const { streams, read, scheduler, until } = streamsWorld();
    const id = opened(streams.openCursor(undefined));
    const answer = read(id);
    await until(150);
    const result = await answer;
    expect(result.ok && result.changes).toEqual([]);
    expect(result.ok && result.position.time).toBe(100);
    expect(scheduler.now).toBe(150);
  });

  it('resumes after a token, and fails with position-lost once the token left the oplog window', async () => {
    const { db, streams, read, until, setWindow } = streamsWorld({ lagMs: 0 });
    const first = outboxDoc('A');
    const second = outboxDoc('A');
    db.commit([first, second]);
    await until(1);
    const id = opened(streams.openCursor(undefined));
    db.commit([outboxDoc('B')]);
    const answer = read(id);
    await until(2);
    const result = await answer;
    if (!result.ok) throw new Error('expected changes');
    const token = result.changes[0].token;
    await until(5_000);
    setWindow(1_000);
    const reopened = streams.openCursor(token);
    const lost =
      'id' in reopened
        ? await (async () => {
            const pending = read(reopened.id);
            await until(5_001);
            return pending;
          })()
        : reopened;
    expect(lost.ok).toBe(false);
    expect(!lost.ok && lost.kind).toBe('position-lost');
  });

  it('kills open cursors on a stepdown (a transient error)', async () => {
    const { db, streams, read, until } = streamsWorld();
    const id = opened(streams.openCursor(undefined));
    const answer = read(id);
    db.stepdown(100);
    await until(1);
    const result = await answer;
    expect(!result.ok && result.kind).toBe('transient');
  });
});
