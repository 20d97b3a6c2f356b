import { calmSchedule } from '../support/schedule.fixtures';
import { majorityReachedAt } from './majority-lag';

describe('majorityReachedAt (when the majority time reaches a time, from the schedule)', () => {
  const fault = { target: 0 };

  it('without faults: the time plus the base majority lag', () => {
    expect(majorityReachedAt(calmSchedule(), 1_000)).toBe(1_005);
  });

  it('a slow-majority window before the time holds it back until the window’s commits are in', () => {
    const schedule = calmSchedule({
      faults: [{ kind: 'slow-majority', at: 200, duration: 300, param: 2_000, ...fault }],
    });
    expect(majorityReachedAt(schedule, 100)).toBe(105); // before the window
    expect(majorityReachedAt(schedule, 300)).toBe(300 + 2_000 + 5); // inside it
    expect(majorityReachedAt(schedule, 1_000)).toBe(500 + 2_000 + 5); // a commit just before 500
    expect(majorityReachedAt(schedule, 5_000)).toBe(5_005); // long after
  });

  it('the stall before a stepdown lasts until the stepdown', () => {
    const schedule = calmSchedule({
      faults: [{ kind: 'stepdown', at: 1_000, duration: 100, param: 400, ...fault }],
    });
    expect(majorityReachedAt(schedule, 700)).toBe(1_001 + 5);
    expect(majorityReachedAt(schedule, 500)).toBe(505);
    expect(majorityReachedAt(schedule, 1_200)).toBe(1_205);
  });
});
