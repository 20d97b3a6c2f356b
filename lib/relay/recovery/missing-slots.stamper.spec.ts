import { stampSlotsBeforeRangeReads } from './missing-slots.stamper';

/** A partition store whose events without a slot are stamped `limit` at a time. */
function storeWithout(unslotted: number) {
  const rounds: number[] = [];
  let left = unslotted;
  return {
    rounds,
    left: () => left,
    stampMissingSlots: async (limit: number) => {
      const found = Math.min(limit, left);
      left -= found;
      rounds.push(found);
      return found;
    },
  };
}

describe('stamping slots before a partition reads from the collection', () => {
  it('stamps until a round finds fewer than it asked for, so none is left unseen', async () => {
    const store = storeWithout(2_500);
    expect(await stampSlotsBeforeRangeReads(store, () => true)).toBe(2_500);
    expect(store.rounds).toEqual([1_000, 1_000, 500]);
    expect(store.left()).toBe(0);
  });

  it('asks once when nothing lacks a slot', async () => {
    const store = storeWithout(0);
    expect(await stampSlotsBeforeRangeReads(store, () => true)).toBe(0);
    expect(store.rounds).toEqual([0]);
  });

  it('does nothing on a store without a range (it sees every event)', async () => {
    expect(await stampSlotsBeforeRangeReads({}, () => true)).toBe(0);
  });

  it('stops when the term ends', async () => {
    const store = storeWithout(5_000);
    let rounds = 0;
    await stampSlotsBeforeRangeReads(store, () => rounds++ < 2);
    expect(store.rounds).toEqual([1_000, 1_000]);
  });
});
