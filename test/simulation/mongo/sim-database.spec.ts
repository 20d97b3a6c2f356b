import { SIM_EPOCH_MS } from '../process/sim-process';
import { databaseWorld, outboxDoc } from '../support/world.fixtures';

describe('SimDatabase (what the relay observes of MongoDB)', () => {
  it('shows a commit to the relay only once majority-committed, in commit order', async () => {
    const { db, until } = databaseWorld({ lagMs: 10 });
    db.commit([outboxDoc('A'), outboxDoc('B')]);
    expect(db.findPendingPage(undefined, 10)).toEqual([]);
    await until(10);
    expect(db.findPendingPage(undefined, 10).map((doc) => doc.aggregateId)).toEqual(['A', 'B']);
  });

  it("majority time as mongod reports it: the last majority-committed write's time, in whole seconds, moving only with writes (or the 10 s no-op)", async () => {
    const { db, until } = databaseWorld({ lagMs: 50 });
    const majorityTime = () => db.majorityDate().getTime() - SIM_EPOCH_MS;
    await until(1_500);
    expect(majorityTime()).toBe(0); // nothing written yet
    db.commit([outboxDoc('A')]); // at 1 500, majority-committed at 1 550
    await until(2_300);
    db.commit([outboxDoc('B')]); // at 2 300, at 2 350
    await until(2_349);
    expect(majorityTime()).toBe(1_000); // A's second
    await until(2_350);
    expect(majorityTime()).toBe(2_000);
    db.commit([outboxDoc('C')]);
    db.stepdown(10); // C is rolled back: nothing holds the majority time back
    expect(majorityTime()).toBe(2_000);
    await until(9_999);
    expect(majorityTime()).toBe(2_000); // no write since: it stands still
    await until(10_000);
    expect(majorityTime()).toBe(10_000); // the primary's periodic no-op
  });

  it('majorityWriteTime answers the server time in ms once every earlier commit is majority-committed', async () => {
    const { db, until } = databaseWorld({ lagMs: 50 });
    await until(1_234);
    db.commit([outboxDoc('A')]); // majority-committed at 1 284
    const answers: number[] = [];
    db.majorityWriteTime((answer) => {
      if (answer.ok) answers.push(answer.value.getTime() - SIM_EPOCH_MS);
    });
    await until(1_283);
    expect(answers).toEqual([]);
    await until(1_284);
    expect(answers).toEqual([1_234]);
  });

  it('majorityWriteTime after a stepdown waits only for the commits that survived it (a rolled-back one never becomes majority)', async () => {
    const { db, until } = databaseWorld({ lagMs: 50 });
    await until(1_000);
    db.commit([outboxDoc('A')]); // majority-committed at 1 050
    await until(1_100);
    db.commit([outboxDoc('B')]);
    expect(db.stepdown(10)).toBe(1); // B is rolled back
    await until(1_200);
    const answers: number[] = [];
    db.majorityWriteTime((answer) => {
      if (answer.ok) answers.push(answer.value.getTime() - SIM_EPOCH_MS);
    });
    expect(answers).toEqual([1_200]);
  });

  it('numbers events per aggregate in commit order, and reuses numbers of rolled-back commits', async () => {
    const { db, history, until } = databaseWorld({ lagMs: 10 });
    const first = outboxDoc('A');
    db.commit([first]);
    await until(10);
    const rolledBack = outboxDoc('A');
    db.commit([rolledBack]);
    expect(db.stepdown(100)).toBe(1);
    expect(history.commits.get(rolledBack.eventId)?.rolledBackAt).toBe(10);
    expect(db.electionActive()).toBe(true);
    await until(200);
    const next = outboxDoc('A');
    db.commit([next]);
    await until(300);
    expect(
      db
        .findPendingOfAggregates([{ aggregateType: 'Order', aggregateId: 'A' }], 10)
        .map((d) => d.sequence),
    ).toEqual([1, 2]);
    expect(history.committed().map((commit) => commit.eventId)).toEqual([
      first.eventId,
      next.eventId,
    ]);
  });

  it('lands a fenced write only on documents no higher fence wrote, and stamps them', async () => {
    const { db, until } = databaseWorld({ lagMs: 0 });
    const doc = outboxDoc('A');
    db.commit([doc]);
    await until(1);
    expect(db.markHeld([doc._id], new Date(5), 3)).toHaveLength(1);
    expect(db.markPublished([doc._id], new Date(6), 2)).toEqual([]);
    expect(db.inspect(doc.eventId)?.status).toBe('pending');
    expect(db.markPublished([doc._id], new Date(6), 3)).toEqual([
      { key: String(doc._id), eventId: doc.eventId, stampBefore: 3 },
    ]);
    expect(db.inspect(doc.eventId)?.nextAttemptAt).toBeUndefined();
  });

  it('grants the lease only when free, expired at the given server time, or held; fences checkpoint writes', () => {
    const { db } = databaseWorld();
    const grant = db.acquireLease('a', new Date(0), new Date(1_000));
    expect(grant?.fencing).toBe(1);
    expect(db.acquireLease('b', new Date(999), new Date(2_000))).toBeUndefined();
    expect(db.acquireLease('b', new Date(1_000), new Date(2_000))?.fencing).toBe(2);
    expect(db.renewLease('a', 1, new Date(3_000))).toBe(false);
    expect(db.claimCheckpoint(2)).toEqual({ token: undefined, savedAt: undefined });
    expect(db.claimCheckpoint(1)).toBeUndefined();
    expect(db.writeCheckpoint({ pos: 1, index: 0, time: 0 }, 1, new Date(0))).toBe(false);
  });

  it('keeps the drain order (type, id, sequence, _id) and pages after a given event', async () => {
    const { db, until } = databaseWorld({ lagMs: 0 });
    db.commit([outboxDoc('B'), outboxDoc('A'), outboxDoc('B', 'Invoice'), outboxDoc('A')]);
    await until(1);
    const all = db.findPendingPage(undefined, 10);
    expect(all.map((doc) => `${doc.aggregateType}/${doc.aggregateId}/${doc.sequence}`)).toEqual([
      'Invoice/B/1',
      'Order/A/1',
      'Order/A/2',
      'Order/B/1',
    ]);
    expect(db.findPendingPage(all[1], 2).map((doc) => doc.eventId)).toEqual([
      all[2].eventId,
      all[3].eventId,
    ]);
  });
});
