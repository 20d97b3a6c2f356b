import type { OptionChecker, OptionKeys } from '../../common/options/option.checker';

/**
 * How `OutboxKafkaServer` groups the messages Kafka fetched for one partition: consecutive events
 * of one `@IdempotentHandler` consumer are applied in one MongoDB transaction, up to these limits
 * and never longer than `handlerTimeoutMs` in all (`consumer.batch` of `OutboxModule.forRoot`).
 */
export interface ConsumerBatchOptions {
  /** Most events in one transaction. Default 100; 1 applies each event in its own (no batching). */
  maxEvents?: number;
  /**
   * Most message bytes (value + key + headers) in one transaction. Default 4 MiB, at most 8 MiB: a
   * transaction's writes stay well below MongoDB's 16 MB limit of one oplog entry (servers before
   * 4.2 write a transaction as one entry). A larger message is applied alone.
   */
  maxBytes?: number;
}

export type ResolvedConsumerBatchOptions = Required<ConsumerBatchOptions>;

export const CONSUMER_BATCH_DEFAULTS = { maxEvents: 100, maxBytes: 4 * 1024 * 1024 } as const;

export const CONSUMER_BATCH_LIMITS = {
  maxEvents: { min: 1, max: 1000 },
  maxBytes: { min: 1024, max: 8 * 1024 * 1024 },
} as const;

const BATCH_KEYS = {
  maxEvents: true,
  maxBytes: true,
} as const satisfies OptionKeys<ConsumerBatchOptions>;

/** Merges defaults into `consumer.batch` and validates it (through the consumer's checker). */
export function resolveConsumerBatch(
  consumer: OptionChecker,
  raw: unknown,
): ResolvedConsumerBatchOptions {
  const given = consumer.object<ConsumerBatchOptions>(
    'batch',
    raw,
    BATCH_KEYS,
    'Pass { maxEvents, maxBytes }, or leave it out.',
  );
  const check = consumer.at('batch');
  return {
    maxEvents: check.int(
      'maxEvents',
      given.maxEvents,
      CONSUMER_BATCH_DEFAULTS.maxEvents,
      CONSUMER_BATCH_LIMITS.maxEvents,
      'Give the most events applied in one transaction (1 to 1000; 1: one transaction per event).',
    ),
    maxBytes: check.int(
      'maxBytes',
      given.maxBytes,
      CONSUMER_BATCH_DEFAULTS.maxBytes,
      { ...CONSUMER_BATCH_LIMITS.maxBytes, unit: 'bytes' },
      'Give the most message bytes applied in one transaction (1 KiB to 8 MiB).',
    ),
  };
}
