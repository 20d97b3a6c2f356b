/** A doubling backoff: `initialMs`, then twice as long per attempt, at most `maxMs`. */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  /**
   * Spread of each delay, +/- this fraction (0 to 1), so that many failures do not retry in
   * lockstep: one `random()` draw per delay (also at 0) and delays rounded to whole ms. Without
   * it, no draw and no rounding.
   */
  jitter?: number;
}

/**
 * Delay before retry number `attempts` (1 = first retry): `initialMs * 2^(attempts-1)` capped at
 * `maxMs`, spread by the policy's `jitter` when it has one. The relay's policies have one
 * (`relay.backoff`); the consumer's (`consumer.retryBackoff`, its sink's) have none.
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
