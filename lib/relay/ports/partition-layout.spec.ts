import { eventSlot, SLOT_COUNT } from '../../events/event-slot';
import { inSlotRange, partitionOfSlot, slotsOfPartition } from './partition-layout';

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

  it('places an event without a slot in the partition of its aggregate', () => {
    const aggregate = { aggregateType: 'Order', aggregateId: 'o-42' };
    const owner = partitionOfSlot(eventSlot('Order', 'o-42'), 4);
    const owners = [0, 1, 2, 3].filter((p) => inSlotRange(slotsOfPartition(p, 4), aggregate));
    expect(owners).toEqual([owner]);
    expect(inSlotRange(slotsOfPartition(0, 4), { ...aggregate, slot: 0 })).toBe(true);
  });
});
