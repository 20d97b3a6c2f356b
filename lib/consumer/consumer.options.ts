/** Defaults for `@IdempotentHandler` consumers (owned by lib/consumer). */
export interface ConsumerOptions {
  /** How long processed records are kept (TTL), in seconds. Default 7 days. */
  processedRetentionSeconds?: number;
}

export type ResolvedConsumerOptions = Required<ConsumerOptions>;

/**
 * Merges defaults into `raw` and validates it. Throws `OutboxOptionsError` (lib/options)
 * naming the option (`consumer.<key>`) and the fix. Called by the options validator at bootstrap.
 */
export function resolveConsumerOptions(raw: ConsumerOptions | undefined): ResolvedConsumerOptions {
  return { processedRetentionSeconds: raw?.processedRetentionSeconds ?? 7 * 24 * 3600 };
}
