import { SLOT_COUNT } from '../../events/event-slot';
import { partitionOfSlot, slotsOfPartition } from './partition-layout';

describe('partition layout', () => {
  it.each([1, 2, 3, 7, 16, 256, SLOT_COUNT])(
    'covers every slot exactly once, and partitionOfSlot agrees (%i partitions)',
    (partitions) => {
      let next = 0;
      for (let p = 0; p < partitions; p++) {
        const range = slotsOfPartition(p, partitions);
        expect(range.from).toBe(next);
        expect(range.to).toBeGreaterThan(range.from);
        expect(partitionOfSlot(range.from, partitions)).toBe(p);
        expect(partitionOfSlot(range.to - 1, partitions)).toBe(p);
        next = range.to;
      }
      expect(next).toBe(SLOT_COUNT);
    },
  );
});
