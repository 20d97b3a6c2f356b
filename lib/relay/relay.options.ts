/** Options of the relay (owned by lib/relay; see README "Relay options"). */
export interface RelayOptions {
  /** Start the relay in `onApplicationBootstrap`. Default true. */
  autoStart?: boolean;
}

export type ResolvedRelayOptions = Required<RelayOptions>;

/**
 * Merges defaults into `raw` and validates it. Throws `OutboxOptionsError` (lib/options)
 * naming the option (`relay.<key>`) and the fix. Called by the options validator at bootstrap.
 */
export function resolveRelayOptions(raw: RelayOptions | undefined): ResolvedRelayOptions {
  return { autoStart: raw?.autoStart ?? true };
}
