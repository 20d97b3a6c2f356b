import { SimScheduler } from './sim.scheduler';
import { SimTrace } from './sim.trace';

describe('SimScheduler', () => {
  it('runs tasks by virtual time, then in the order they were scheduled', async () => {
    const scheduler = new SimScheduler(new SimTrace());
    const seen: string[] = [];
    scheduler.at(20, 't', 'late', () => seen.push(`late@${scheduler.now}`));
    scheduler.at(10, 't', 'first', () => seen.push(`first@${scheduler.now}`));
    scheduler.at(10, 't', 'second', () => seen.push(`second@${scheduler.now}`));
    const cancelled = scheduler.at(15, 't', 'cancelled', () => seen.push('cancelled'));
    scheduler.cancel(cancelled);
    expect(await scheduler.run({ until: 100 })).toBe('idle');
    expect(seen).toEqual(['first@10', 'second@10', 'late@20']);
  });

  it('lets every promise continuation of a step run before the next step', async () => {
    const scheduler = new SimScheduler(new SimTrace());
    const seen: string[] = [];
    scheduler.at(1, 't', 'chain', () => {
      void Promise.resolve()
        .then(() => Promise.resolve())
        .then(() => seen.push(`chain done@${scheduler.now}`));
    });
    scheduler.at(2, 't', 'next', () => seen.push(`next@${scheduler.now}`));
    await scheduler.run({ until: 10 });
    expect(seen).toEqual(['chain done@1', 'next@2']);
  });

  it('stops at the time limit without running later tasks, and when done() holds', async () => {
    const scheduler = new SimScheduler(new SimTrace());
    let count = 0;
    for (let at = 0; at < 10; at++) scheduler.at(at * 10, 't', 'tick', () => count++);
    expect(await scheduler.run({ until: 35 })).toBe('time-limit');
    expect(count).toBe(4);
    expect(scheduler.now).toBe(35);
    expect(await scheduler.run({ until: 1_000, done: () => count >= 6 })).toBe('done');
    expect(count).toBe(6);
  });

  it('never moves time backwards: a task scheduled in the past runs now', async () => {
    const scheduler = new SimScheduler(new SimTrace());
    const times: number[] = [];
    scheduler.at(50, 't', 'now', () =>
      scheduler.at(10, 't', 'past', () => times.push(scheduler.now)),
    );
    await scheduler.run({ until: 100 });
    expect(times).toEqual([50]);
  });
});
