import { groupBy } from './group-by';

describe('groupBy', () => {
  it('keeps the items’ order within each group and the groups in the order first seen', () => {
    const items = [
      { type: 'b', id: 1 },
      { type: 'a', id: 2 },
      { type: 'b', id: 3 },
    ];
    expect([...groupBy(items, (item) => item.type)]).toEqual([
      ['b', [items[0], items[2]]],
      ['a', [items[1]]],
    ]);
    expect([
      ...groupBy(
        items,
        (item) => item.type,
        (item) => item.id,
      ),
    ]).toEqual([
      ['b', [1, 3]],
      ['a', [2]],
    ]);
  });
});
