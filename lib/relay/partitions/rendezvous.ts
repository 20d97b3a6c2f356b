import { createHash } from 'node:crypto';

/**
 * Rendezvous (highest random weight) hashing: each (owner, partition) pair has a score, and a
 * partition "prefers" the live owner with the highest one. When an instance joins or leaves,
 * only the partitions it wins or held change hands, so the assignment stays stable.
 */
export function rendezvousScore(owner: string, partition: number): number {
  return createHash('sha256')
    .update(owner)
    .update('\u0000')
    .update(String(partition))
    .digest()
    .readUInt32BE(0);
}

/** The live owner a partition prefers (undefined when there is none). */
export function preferredOwner(owners: readonly string[], partition: number): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const owner of owners) {
    const score = rendezvousScore(owner, partition);
    if (score > bestScore || (score === bestScore && best !== undefined && owner < best)) {
      best = owner;
      bestScore = score;
    }
  }
  return best;
}

/**
 * `partitions` ordered by how much `owner` should hold them: first those that prefer it, then
 * by its score (highest first).
 */
export function byPreference(
  owner: string,
  owners: readonly string[],
  partitions: readonly number[],
): number[] {
  const keyed = partitions.map((partition) => ({
    partition,
    mine: preferredOwner(owners, partition) === owner,
    score: rendezvousScore(owner, partition),
  }));
  keyed.sort(
    (a, b) => Number(b.mine) - Number(a.mine) || b.score - a.score || a.partition - b.partition,
  );
  return keyed.map((entry) => entry.partition);
}
