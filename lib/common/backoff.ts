/** A doubling backoff: `initialMs`, then twice as long per attempt, at most `maxMs`. */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  /** +/- this fraction (0 to 1) of each delay: one `random()` draw per delay (also at 0), rounded. */
  jitter?: number;
}

/**
 * Delay before retry `attempts` (1 = first): `initialMs * 2^(attempts-1)` capped at `maxMs`,
 * spread by `jitter` if any (the relay's policies; the consumer's have none: no draw, no rounding).
 */
export function backoffDelay(
  attempts: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), 40);
  const base = Math.min(policy.maxMs, policy.initialMs * 2 ** exponent);
  if (policy.jitter === undefined) return base;
  const spread = base * policy.jitter * (random() * 2 - 1);
  return Math.max(0, Math.round(Math.min(policy.maxMs, base + spread)));
}
