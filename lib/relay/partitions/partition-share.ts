import type { RelayMember } from '../ports/relay-partitions.store';
import { byPreference } from './rendezvous';

/** What one instance sees at a membership tick. */
export interface ShareInput {
  owner: string;
  partitions: number;
  /** Live members configured with the same number of partitions (this one included). */
  members: readonly RelayMember[];
  /** Partitions this instance holds now. */
  holding: readonly number[];
  /** Partitions no lease holds (none, expired or released, at the server's time). */
  free: readonly number[];
}

/** What to do now: partitions to try to take, partitions to hand over. */
export interface SharePlan {
  take: number[];
  release: number[];
  /** floor and ceil of partitions / live members. */
  min: number;
  max: number;
}

/**
 * Fair share: every live instance ends up with `floor(P / live)` or `ceil(P / live)`
 * partitions. Above `ceil`, an instance releases the extras; above `floor` while another one
 * is below it (by its last heartbeat), it releases one per tick. It takes free partitions up
 * to `ceil`, or only up to `floor` while another instance is below `floor` (so what is handed
 * over goes to the one that needs it). Which ones: by
 * rendezvous preference (`byPreference`), so the assignment is stable.
 */
export function planShare(input: ShareInput): SharePlan {
  const owners = [...new Set([input.owner, ...input.members.map((member) => member.owner)])];
  const live = owners.length;
  const min = Math.floor(input.partitions / live);
  const max = Math.ceil(input.partitions / live);
  const held = input.holding.length;
  const starving = input.members.some(
    (member) => member.owner !== input.owner && member.holding.length < min,
  );
  const release: number[] = [];
  const leastWanted = byPreference(input.owner, owners, input.holding).reverse();
  if (held > max) release.push(...leastWanted.slice(0, held - max));
  else if (held > min && starving) release.push(leastWanted[0]);
  const target = starving ? min : max;
  const take =
    release.length > 0 || held >= target
      ? []
      : byPreference(input.owner, owners, input.free).slice(0, target - held);
  return { take, release, min, max };
}
