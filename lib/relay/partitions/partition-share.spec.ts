import type { RelayMember } from '../ports/relay-partitions.store';
import { planShare } from './partition-share';
import { preferredOwner } from './rendezvous';

const member = (owner: string, holding: number[]): RelayMember => ({
  owner,
  partitions: 8,
  holding,
  expiresAt: new Date(1),
});
const all = (n: number) => Array.from({ length: n }, (_, i) => i);

/** Runs the plan of every member in turn (each sees the others' last holdings) until stable. */
function converge(owners: string[], start: Record<string, number[]>, partitions = 8) {
  const holding: Record<string, number[]> = Object.fromEntries(
    owners.map((owner) => [owner, [...(start[owner] ?? [])]]),
  );
  for (let round = 0; round < 50; round++) {
    let changed = false;
    for (const owner of owners) {
      const held = new Set(Object.values(holding).flat());
      const plan = planShare({
        owner,
        partitions,
        members: owners.map((o) => member(o, holding[o])),
        holding: holding[owner],
        free: all(partitions).filter((p) => !held.has(p)),
      });
      if (plan.take.length + plan.release.length > 0) changed = true;
      holding[owner] = [...holding[owner].filter((p) => !plan.release.includes(p)), ...plan.take];
    }
    if (!changed) return holding;
  }
  throw new Error(`no convergence: ${JSON.stringify(holding)}`);
}

describe('planShare (fair share by rendezvous preference)', () => {
  it('spreads 8 partitions over 3 instances as 3/3/2, each partition held once', () => {
    const holding = converge(['a', 'b', 'c'], {});
    const counts = Object.values(holding)
      .map((h) => h.length)
      .sort();
    expect(counts).toEqual([2, 3, 3]);
    expect(
      Object.values(holding)
        .flat()
        .sort((x, y) => x - y),
    ).toEqual(all(8));
  });

  it('hands partitions over to a joining instance until the spread is even', () => {
    const holding = converge(['a', 'b', 'c'], { a: all(8) });
    expect(
      Object.values(holding)
        .map((h) => h.length)
        .sort(),
    ).toEqual([2, 3, 3]);
  });

  it('a lone instance takes every partition', () => {
    expect(converge(['a'], {}).a.sort((x, y) => x - y)).toEqual(all(8));
  });

  it('takes the partitions that prefer it first', () => {
    const plan = planShare({
      owner: 'a',
      partitions: 8,
      members: [member('a', []), member('b', all(8).slice(0, 0))],
      holding: [],
      free: all(8),
    });
    const preferred = all(8).filter((p) => preferredOwner(['a', 'b'], p) === 'a');
    expect(plan.take.slice(0, preferred.length).sort()).toEqual(preferred.sort());
  });

  it('releases down to the ceiling at once', () => {
    const plan = planShare({
      owner: 'a',
      partitions: 8,
      members: [member('a', all(8)), member('b', []), member('c', [])],
      holding: all(8),
      free: [],
    });
    expect(plan.release).toHaveLength(5);
    expect(plan.take).toEqual([]);
  });
});
