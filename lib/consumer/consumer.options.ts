import { KAFKA_HEADERS } from '../common/envelope';
import { OutboxOptionsError } from '../common/errors/outbox-options.error';
import { topicNameProblem } from '../publisher/topic-name';
import type { EventIdFallback } from './event-id.extractor';

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
}

export interface ResolvedConsumerOptions {
  processedRetentionSeconds: number;
  maxFailures: number;
  retryBackoff: { initialMs: number; maxMs: number };
  handlerTimeoutMs: number;
  deadLetterMaxValueBytes: number;
  deadLetterTopic?: string;
  eventIdHeader: string;
  eventIdFallback?: EventIdFallback;
  errorHistoryLimit: number;
}

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

const KNOWN_KEYS: ReadonlySet<string> = new Set([
  'processedRetentionSeconds',
  'maxFailures',
  'retryBackoff',
  'handlerTimeoutMs',
  'deadLetterMaxValueBytes',
  'deadLetterTopic',
  'eventIdHeader',
  'eventIdFallback',
  'errorHistoryLimit',
]);

/**
 * Merges defaults into `raw` and validates it. Throws `OutboxOptionsError` naming the option
 * (`consumer.<key>`) and the fix. Called by the options validator at bootstrap.
 */
export function resolveConsumerOptions(raw: ConsumerOptions | undefined): ResolvedConsumerOptions {
  if (raw === undefined || raw === null) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new OutboxOptionsError(
      'consumer',
      `expected an object, got ${Array.isArray(raw) ? 'an array' : typeof raw}`,
      'Pass an object such as { maxFailures: 5 }, or leave it out.',
    );
  }
  for (const key of Object.keys(raw)) {
    if (!KNOWN_KEYS.has(key)) {
      throw new OutboxOptionsError(
        `consumer.${key}`,
        'unknown option',
        `Known options: ${[...KNOWN_KEYS].join(', ')}.`,
      );
    }
  }
  const resolved: ResolvedConsumerOptions = {
    processedRetentionSeconds: integerAtLeast(
      'processedRetentionSeconds',
      raw.processedRetentionSeconds,
      CONSUMER_DEFAULTS.processedRetentionSeconds,
      60,
      'Give the TTL of processed records in seconds (at least 60); it must exceed the longest redelivery window.',
    ),
    maxFailures: integerAtLeast(
      'maxFailures',
      raw.maxFailures,
      CONSUMER_DEFAULTS.maxFailures,
      1,
      'Give how many failures of one event are tolerated before it is dead-lettered (1 or more).',
    ),
    eventIdHeader: nonEmptyString(
      'eventIdHeader',
      raw.eventIdHeader,
      CONSUMER_DEFAULTS.eventIdHeader,
    ),
    retryBackoff: resolveRetryBackoff(raw.retryBackoff),
    handlerTimeoutMs: integerBetween(
      'handlerTimeoutMs',
      raw.handlerTimeoutMs,
      CONSUMER_DEFAULTS.handlerTimeoutMs,
      CONSUMER_LIMITS.handlerTimeoutMs,
      "Give the longest run of one handler attempt in ms, below the Kafka consumer's sessionTimeout.",
    ),
    deadLetterMaxValueBytes: integerBetween(
      'deadLetterMaxValueBytes',
      raw.deadLetterMaxValueBytes,
      CONSUMER_DEFAULTS.deadLetterMaxValueBytes,
      CONSUMER_LIMITS.deadLetterMaxValueBytes,
      'Give the largest value copy a dead letter keeps, in bytes.',
    ),
    errorHistoryLimit: integerBetween(
      'errorHistoryLimit',
      raw.errorHistoryLimit,
      CONSUMER_DEFAULTS.errorHistoryLimit,
      CONSUMER_LIMITS.errorHistoryLimit,
      'Give how many recent errors a dead-letter record keeps.',
    ),
  };
  if (raw.deadLetterTopic !== undefined) {
    resolved.deadLetterTopic = checkDeadLetterTopic(
      'consumer.deadLetterTopic',
      raw.deadLetterTopic,
    );
  }
  if (raw.eventIdFallback !== undefined) {
    if (typeof raw.eventIdFallback !== 'function') {
      throw new OutboxOptionsError(
        'consumer.eventIdFallback',
        `expected a function, got ${typeof raw.eventIdFallback}`,
        'Pass (message, payload) => string | undefined, or leave it out.',
      );
    }
    resolved.eventIdFallback = raw.eventIdFallback;
  }
  return resolved;
}

/** Validates a dead-letter topic name (module option or `@IdempotentHandler` option). */
export function checkDeadLetterTopic(option: string, value: unknown): string {
  const problem = topicNameProblem(value);
  if (problem !== undefined) {
    throw new OutboxOptionsError(
      option,
      `${JSON.stringify(value)} is not a valid Kafka topic name: it ${problem}`,
      'Use 1-249 characters from a-z, A-Z, 0-9, ".", "_" and "-".',
    );
  }
  return value as string;
}

function resolveRetryBackoff(raw: unknown): ResolvedConsumerOptions['retryBackoff'] {
  const defaults = CONSUMER_DEFAULTS.retryBackoff;
  if (raw === undefined) return { ...defaults };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new OutboxOptionsError(
      'consumer.retryBackoff',
      `expected an object, got ${Array.isArray(raw) ? 'an array' : typeof raw}`,
      'Pass { initialMs, maxMs }, or leave it out.',
    );
  }
  const given = raw as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (key !== 'initialMs' && key !== 'maxMs') {
      throw new OutboxOptionsError(
        `consumer.retryBackoff.${key}`,
        'unknown option',
        'Known: initialMs, maxMs.',
      );
    }
  }
  const fix = 'Give delays in ms, initialMs <= maxMs.';
  const initialMs = integerBetween(
    'retryBackoff.initialMs',
    given.initialMs,
    defaults.initialMs,
    CONSUMER_LIMITS.retryBackoffMs,
    fix,
  );
  const maxMs = integerBetween(
    'retryBackoff.maxMs',
    given.maxMs,
    Math.max(defaults.maxMs, initialMs),
    CONSUMER_LIMITS.retryBackoffMs,
    fix,
  );
  if (maxMs < initialMs) {
    throw new OutboxOptionsError(
      'consumer.retryBackoff.maxMs',
      `${maxMs} is below initialMs ${initialMs}`,
      fix,
    );
  }
  return { initialMs, maxMs };
}

function integerBetween(
  key: string,
  value: unknown,
  fallback: number,
  range: { min: number; max: number },
  fix: string,
): number {
  if (value === undefined) return fallback;
  if (
    typeof value !== 'number' ||
    !Number.isSafeInteger(value) ||
    value < range.min ||
    value > range.max
  ) {
    throw new OutboxOptionsError(
      `consumer.${key}`,
      `expected an integer from ${range.min} to ${range.max}, got ${JSON.stringify(value)}`,
      fix,
    );
  }
  return value;
}

function integerAtLeast(
  key: string,
  value: unknown,
  fallback: number,
  min: number,
  fix: string,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new OutboxOptionsError(
      `consumer.${key}`,
      `expected an integer >= ${min}, got ${JSON.stringify(value)}`,
      fix,
    );
  }
  return value;
}

function nonEmptyString(key: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value.trim().length === 0) {
    throw new OutboxOptionsError(
      `consumer.${key}`,
      `expected a non-empty string, got ${JSON.stringify(value)}`,
      'Give the Kafka header name that holds the event id, or leave it out (default "ce_id").',
    );
  }
  return value;
}
