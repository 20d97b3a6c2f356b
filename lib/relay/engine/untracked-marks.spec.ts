import { UntrackedMarks } from './untracked-marks';

describe('UntrackedMarks (aggregates with marks and no lane, in a fixed 8 KiB)', () => {
  it('reports every aggregate added, and none while nothing was added', () => {
    const marks = new UntrackedMarks();
    expect(marks.empty).toBe(true);
    expect(marks.mayHave('Order\u0000a')).toBe(false);
    const keys = Array.from({ length: 5_000 }, (_, i) => `Order\u0000${i}`);
    keys.forEach((key) => marks.add(key));
    expect(keys.every((key) => marks.mayHave(key))).toBe(true);
    const others = Array.from({ length: 5_000 }, (_, i) => `Invoice\u0000${i}`);
    const falsePositives = others.filter((key) => marks.mayHave(key)).length;
    expect(falsePositives).toBeLessThan(others.length / 20); // about 2% with 5 000 in the set
  });

  it('forgets on a rebuild what the rebuild did not find, keeps what was added meanwhile', () => {
    const marks = new UntrackedMarks();
    marks.add('gone');
    marks.add('still');
    marks.startRebuild();
    marks.add('still'); // found in the collection by the rescan
    marks.add('parked-meanwhile');
    marks.finishRebuild();
    expect(marks.mayHave('still')).toBe(true);
    expect(marks.mayHave('parked-meanwhile')).toBe(true);
    expect(marks.mayHave('gone')).toBe(false);
    marks.startRebuild();
    marks.finishRebuild();
    expect(marks.empty).toBe(true);
  });

  it('keeps its set when a rebuild is abandoned (a read failed)', () => {
    const marks = new UntrackedMarks();
    marks.add('kept');
    marks.startRebuild();
    marks.abandonRebuild();
    marks.finishRebuild();
    expect(marks.mayHave('kept')).toBe(true);
  });
});
