import { KAFKA_HEADERS } from '../documents/outbox-event.envelope';
import { OutboxOptionsError } from '../common/errors/outbox-options.error';
import { OptionChecker, type OptionKeys } from '../common/options/option.checker';
import { topicNameProblem } from '../publisher/topic-name';
import type { EventIdFallback } from './input/event-id.extractor';
import {
  resolveConsumerBatch,
  type ConsumerBatchOptions,
  type ResolvedConsumerBatchOptions,
} from './batch/consumer-batch.options';

/** Module-level defaults for `@IdempotentHandler` consumers (`OutboxModule.forRoot({ consumer })`). */
export interface ConsumerOptions {
  /**
   * How long a processed `(consumer, eventId)` record is kept (TTL index on `processedAt`), in
   * seconds. Default 7 days. It MUST exceed the longest time a message can be delivered again
   * (consumer lag, a replay from an old offset, a relay that re-publishes after a long outage):
   * an event redelivered after its record expired is applied again.
   */
  processedRetentionSeconds?: number;
  /**
   * Failures of one event (per consumer) before it is dead-lettered and skipped. Default 5. A
   * failing handler is retried in the same delivery (with `retryBackoff` between attempts); a
   * rejection before the handler runs (a guard, a pipe, an interceptor) is retried by redelivery.
   */
  maxFailures?: number;
  /** Delay between attempts of a failing event, doubling from `initialMs` up to `maxMs`. Default 200 ms, 5 s. */
  retryBackoff?: { initialMs?: number; maxMs?: number };
  /**
   * Longest run of one handler attempt, in ms. Default 20 000. On expiry the attempt's
   * transaction is aborted and the attempt counts as a failure; the handler's later writes
   * through that transaction are refused (see the README). Keep it below the Kafka consumer's
   * `sessionTimeout` (kafkajs default 30 000) minus a few seconds, so a stuck handler never costs
   * the partition and another group member never runs the same message concurrently.
   */
  handlerTimeoutMs?: number;
  /** Also send dead-lettered messages to this Kafka topic (through the transport's producer). */
  deadLetterTopic?: string;
  /** The header holding the event id. Default `ce_id` (what the relay writes). */
  eventIdHeader?: string;
  /** Computes the event id of messages without the header (other producers). Default: none. */
  eventIdFallback?: EventIdFallback;
  /** Errors kept per dead-letter record (the most recent). Default 10, at most 100. */
  errorHistoryLimit?: number;
  /**
   * Largest copy of a message value kept in a dead letter (and sent to `deadLetterTopic`), in
   * bytes. A larger value is kept truncated, with its full size and SHA-256 (`valueBytes`,
   * `valueSha256`, `valueTruncated`); the original stays in its topic at `topic/partition/offset`
   * until the topic's retention removes it. Default 524 288 (512 KiB), at most 8 MiB.
   */
  deadLetterMaxValueBytes?: number;
  /**
   * Consecutive events of one consumer that Kafka fetched together are applied in one
   * transaction: up to `maxEvents` (default 100) and `maxBytes` (default 4 MiB), never longer than
   * `handlerTimeoutMs` in all. A failure inside a batch aborts it and applies its events again one
   * at a time. `{ maxEvents: 1 }`: one transaction per event. See docs/consuming.md.
   */
  batch?: ConsumerBatchOptions;
}

type OptionalConsumerOption = 'deadLetterTopic' | 'eventIdFallback';

/** The consumer's slice of the resolved options (token `OUTBOX_CONSUMER_OPTIONS`): defaults set. */
export type ResolvedConsumerOptions = Required<Omit<ConsumerOptions, OptionalConsumerOption>> &
  Pick<ConsumerOptions, OptionalConsumerOption> & {
    retryBackoff: Required<NonNullable<ConsumerOptions['retryBackoff']>>;
    batch: ResolvedConsumerBatchOptions;
  };

export const CONSUMER_DEFAULTS = {
  processedRetentionSeconds: 7 * 24 * 3600,
  maxFailures: 5,
  retryBackoff: { initialMs: 200, maxMs: 5000 },
  handlerTimeoutMs: 20_000,
  deadLetterMaxValueBytes: 512 * 1024,
  eventIdHeader: KAFKA_HEADERS.id,
  errorHistoryLimit: 10,
} as const;

/** Bounds of the numeric options (a dead letter must stay well below MongoDB's 16 MB). */
export const CONSUMER_LIMITS = {
  handlerTimeoutMs: { min: 100, max: 10 * 60 * 1000 },
  retryBackoffMs: { min: 1, max: 10 * 60 * 1000 },
  deadLetterMaxValueBytes: { min: 1024, max: 8 * 1024 * 1024 },
  errorHistoryLimit: { min: 1, max: 100 },
} as const;

const CONSUMER_KEYS = {
  processedRetentionSeconds: true,
  maxFailures: true,
  retryBackoff: true,
  handlerTimeoutMs: true,
  deadLetterMaxValueBytes: true,
  deadLetterTopic: true,
  eventIdHeader: true,
  eventIdFallback: true,
  errorHistoryLimit: true,
  batch: true,
} as const satisfies OptionKeys<ConsumerOptions>;
const RETRY_BACKOFF_KEYS = {
  initialMs: true,
  maxMs: true,
} as const satisfies OptionKeys<NonNullable<ConsumerOptions['retryBackoff']>>;

/**
 * Merges defaults into `raw` and validates it. Throws `OutboxOptionsError` naming the option
 * (`consumer.<key>`) and the fix. Called by the options validator at bootstrap.
 */
export function resolveConsumerOptions(raw: ConsumerOptions | undefined): ResolvedConsumerOptions {
  const check = new OptionChecker('consumer.', (option, problem, fix) => {
    throw new OutboxOptionsError(option, problem, fix);
  });
  const given = check.object<ConsumerOptions>(
    '',
    raw ?? {},
    CONSUMER_KEYS,
    'Pass an object such as { maxFailures: 5 }, or leave it out.',
  );
  const resolved: ResolvedConsumerOptions = {
    processedRetentionSeconds: check.int(
      'processedRetentionSeconds',
      given.processedRetentionSeconds,
      CONSUMER_DEFAULTS.processedRetentionSeconds,
      { min: 60, unit: 's' },
      'Give the TTL of processed records in seconds (at least 60); it must exceed the longest redelivery window.',
    ),
    maxFailures: check.int(
      'maxFailures',
      given.maxFailures,
      CONSUMER_DEFAULTS.maxFailures,
      { min: 1 },
      'Give how many failures of one event are tolerated before it is dead-lettered (1 or more).',
    ),
    eventIdHeader: check.text(
      'eventIdHeader',
      given.eventIdHeader,
      CONSUMER_DEFAULTS.eventIdHeader,
      'Give the Kafka header name that holds the event id, or leave it out (default "ce_id").',
      true,
    ),
    retryBackoff: resolveRetryBackoff(check, given.retryBackoff),
    batch: resolveConsumerBatch(check, given.batch),
    handlerTimeoutMs: check.durationMs(
      'handlerTimeoutMs',
      given.handlerTimeoutMs,
      CONSUMER_DEFAULTS.handlerTimeoutMs,
      CONSUMER_LIMITS.handlerTimeoutMs,
      "Give the longest run of one handler attempt in ms, below the Kafka consumer's sessionTimeout.",
    ),
    deadLetterMaxValueBytes: check.int(
      'deadLetterMaxValueBytes',
      given.deadLetterMaxValueBytes,
      CONSUMER_DEFAULTS.deadLetterMaxValueBytes,
      { ...CONSUMER_LIMITS.deadLetterMaxValueBytes, unit: 'bytes' },
      'Give the largest value copy a dead letter keeps, in bytes.',
    ),
    errorHistoryLimit: check.int(
      'errorHistoryLimit',
      given.errorHistoryLimit,
      CONSUMER_DEFAULTS.errorHistoryLimit,
      CONSUMER_LIMITS.errorHistoryLimit,
      'Give how many recent errors a dead-letter record keeps.',
    ),
  };
  if (given.deadLetterTopic !== undefined) {
    resolved.deadLetterTopic = checkDeadLetterTopic(
      check,
      'deadLetterTopic',
      given.deadLetterTopic,
    );
  }
  const eventIdFallback = check.fn<EventIdFallback>(
    'eventIdFallback',
    given.eventIdFallback,
    'Pass (message, payload) => string | undefined, or leave it out.',
  );
  if (eventIdFallback) resolved.eventIdFallback = eventIdFallback;
  return resolved;
}

/** Checks a dead-letter topic name (module option or `@IdempotentHandler` option). */
export function checkDeadLetterTopic(
  check: OptionChecker,
  key: string,
  value: unknown,
  fix = '',
): string {
  const problem = topicNameProblem(value);
  check.check(
    key,
    problem && `${JSON.stringify(value)} is not a valid Kafka topic name: it ${problem}`,
    `Use 1-249 characters from a-z, A-Z, 0-9, ".", "_" and "-"${fix}.`,
  );
  return value as string;
}

function resolveRetryBackoff(
  consumer: OptionChecker,
  raw: unknown,
): ResolvedConsumerOptions['retryBackoff'] {
  const defaults = CONSUMER_DEFAULTS.retryBackoff;
  const given = consumer.object<NonNullable<ConsumerOptions['retryBackoff']>>(
    'retryBackoff',
    raw,
    RETRY_BACKOFF_KEYS,
    'Pass { initialMs, maxMs }, or leave it out.',
  );
  const check = consumer.at('retryBackoff');
  const fix = 'Give delays in ms, initialMs <= maxMs.';
  const range = CONSUMER_LIMITS.retryBackoffMs;
  const initialMs = check.durationMs('initialMs', given.initialMs, defaults.initialMs, range, fix);
  const fallbackMax = Math.max(defaults.maxMs, initialMs);
  const maxMs = check.durationMs('maxMs', given.maxMs, fallbackMax, range, fix);
  if (maxMs < initialMs) check.fail('maxMs', `${maxMs} is below initialMs ${initialMs}`, fix);
  return { initialMs, maxMs };
}
