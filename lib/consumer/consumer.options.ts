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
  /** Failures of one event (per consumer) before it is dead-lettered and skipped. Default 5. */
  maxFailures?: number;
  /** Also send dead-lettered messages to this Kafka topic (through the transport's producer). */
  deadLetterTopic?: string;
  /** The header holding the event id. Default `ce_id` (what the relay writes). */
  eventIdHeader?: string;
  /** Computes the event id of messages without the header (other producers). Default: none. */
  eventIdFallback?: EventIdFallback;
  /** Errors kept per dead-letter record (the most recent). Default 10. */
  errorHistoryLimit?: number;
}

export interface ResolvedConsumerOptions {
  processedRetentionSeconds: number;
  maxFailures: number;
  deadLetterTopic?: string;
  eventIdHeader: string;
  eventIdFallback?: EventIdFallback;
  errorHistoryLimit: number;
}

export const CONSUMER_DEFAULTS = {
  processedRetentionSeconds: 7 * 24 * 3600,
  maxFailures: 5,
  eventIdHeader: KAFKA_HEADERS.id,
  errorHistoryLimit: 10,
} as const;

const KNOWN_KEYS: ReadonlySet<string> = new Set([
  'processedRetentionSeconds',
  'maxFailures',
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
    errorHistoryLimit: integerAtLeast(
      'errorHistoryLimit',
      raw.errorHistoryLimit,
      CONSUMER_DEFAULTS.errorHistoryLimit,
      1,
      'Give how many recent errors a dead-letter record keeps (1 or more).',
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
