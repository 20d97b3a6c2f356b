import { RetrySchedule } from './retry.schedule';

describe('RetrySchedule', () => {
  it('hands out due keys earliest first, with moved and deleted keys honoured', () => {
    const schedule = new RetrySchedule<string>();
    schedule.set('a', 30);
    schedule.set('b', 10);
    schedule.set('c', 20);
    schedule.set('a', 5); // moved earlier
    schedule.delete('c');
    expect(schedule.next()).toBe(5);
    expect(schedule.takeDue(15)).toEqual(['a', 'b']);
    expect(schedule.size).toBe(0);
    expect(schedule.next()).toBeUndefined();
  });

  it('keeps 100 000 keys in heap order (start-up with many retrying aggregates)', () => {
    // Defect: start-up rescanned every aggregate for each one added (quadratic).
    const schedule = new RetrySchedule<number>();
    const times = Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 100_003);
    times.forEach((at, key) => schedule.set(key, at));
    const due = schedule.takeDue(Infinity);
    expect(due).toHaveLength(100_000);
    for (let i = 1; i < due.length; i++)
      expect(times[due[i - 1]]).toBeLessThanOrEqual(times[due[i]]);
  });
});
