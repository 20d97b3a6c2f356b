import type { ResolvedRelayOptions } from './relay.options';

/**
 * Delay before retry number `attempts` (1 = first retry): `initialMs * 2^(attempts-1)` capped at
 * `maxMs`, spread by +/- `jitter` so that failures of many aggregates do not retry in lockstep.
 */
export function backoffDelay(
  attempts: number,
  options: ResolvedRelayOptions['backoff'],
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), 40);
  const base = Math.min(options.maxMs, options.initialMs * 2 ** exponent);
  const spread = base * options.jitter * (random() * 2 - 1);
  return Math.max(0, Math.round(Math.min(options.maxMs, base + spread)));
}
