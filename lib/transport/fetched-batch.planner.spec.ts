import { planRuns, type RunCandidate } from './fetched-batch.planner';

const runtime = {};
const other = {};
const group = (consumer = 'billing', over: object = {}) => ({
  runtime,
  consumer,
  maxEvents: 3,
  maxBytes: 100,
  ...over,
});
const sizes = (runs: ReturnType<typeof planRuns<number>>) =>
  runs.map((r) => `${r.items.join(',')}${r.group ? '*' : ''}`);

describe('fetched batch planner', () => {
  it('groups consecutive messages of one consumer, up to maxEvents, keeping order', () => {
    const candidates: RunCandidate<number>[] = [1, 2, 3, 4, 5].map((item) => ({
      item,
      group: group(),
      bytes: 10,
    }));
    expect(sizes(planRuns(candidates))).toEqual(['1,2,3*', '4,5*']);
  });

  it('cuts at another consumer, another runtime, a message without a group, and maxBytes', () => {
    const candidates: RunCandidate<number>[] = [
      { item: 1, group: group(), bytes: 10 },
      { item: 2, group: group('shipping'), bytes: 10 },
      { item: 3, group: group('shipping'), bytes: 10 },
      { item: 4, bytes: 10 },
      { item: 5, group: group('shipping'), bytes: 10 },
      { item: 6, group: { ...group('shipping'), runtime: other }, bytes: 10 },
      { item: 7, group: group(), bytes: 60 },
      { item: 8, group: group(), bytes: 50 },
      { item: 9, group: group(), bytes: 500 },
      { item: 10, group: group(), bytes: 50 },
    ];
    expect(sizes(planRuns(candidates))).toEqual(['1', '2,3*', '4', '5', '6', '7', '8', '9', '10']);
  });

  it('maxEvents 1 (or no group) gives one run per message, none batched', () => {
    const candidates = [1, 2, 3].map((item) => ({
      item,
      group: group('billing', { maxEvents: 1 }),
      bytes: 1,
    }));
    expect(sizes(planRuns(candidates))).toEqual(['1', '2', '3']);
  });
});
