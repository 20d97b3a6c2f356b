import { topicNameProblem } from '../publisher/topic-name';
import { consumerNameProblem, defaultConsumerName } from './consumer-name';
import type { ResolvedConsumerOptions } from './consumer.options';
import { IdempotentHandlerOptionsError } from './errors/idempotent-handler-options.error';
import type { EventIdFallback } from './event-id.extractor';
import type { ConsumeSettings } from './idempotent-consume.flow';
import { isClass, requireClassValidation, type PayloadValidateOption } from './payload.validator';

/** Options of `@IdempotentHandler(...)`; unset ones take the module's `consumer` defaults. */
export interface IdempotentHandlerOptions {
  /**
   * The consumer name: the dedupe key is `(consumer, eventId)`. Default `ClassName.methodName`.
   * Set it explicitly before renaming the class or method, or the events are applied again.
   */
  consumer?: string;
  /** Failures of one event before it is dead-lettered. Default: `consumer.maxFailures` (5). */
  maxFailures?: number;
  /** Kafka topic for dead letters; `false` for none. Default: `consumer.deadLetterTopic`. */
  deadLetterTopic?: string | false;
  /** Event id of messages without the id header. Default: `consumer.eventIdFallback`. */
  eventId?: EventIdFallback;
  /**
   * Rejects bad payloads (they are dead-lettered, not retried): a class-validator DTO class (the
   * handler then receives the DTO instance), or a function returning `false`/a message to reject.
   */
  validate?: PayloadValidateOption;
  /**
   * The `OutboxModule` (by its `connectionName`) whose connection runs the handler's transaction.
   * Default: the module of the default connection, or the only one.
   */
  connectionName?: string;
}

/** The checked options of one decorated method. */
export interface IdempotentHandlerSettings {
  /** `ClassName.methodName`, for messages. */
  handler: string;
  consumer: string;
  maxFailures?: number;
  deadLetterTopic?: string | false;
  eventId?: EventIdFallback;
  validate?: PayloadValidateOption;
  connectionName?: string;
}

const KNOWN_KEYS = new Set([
  'consumer',
  'maxFailures',
  'deadLetterTopic',
  'eventId',
  'validate',
  'connectionName',
]);

/** Checks the decorator's options when the class is defined; throws `IdempotentHandlerOptionsError`. */
export function resolveHandlerOptions(
  className: string,
  methodName: string,
  options: IdempotentHandlerOptions | undefined,
): IdempotentHandlerSettings {
  const handler = `${className}.${methodName}`;
  const fail = (option: string, problem: string, fix: string): never => {
    throw new IdempotentHandlerOptionsError(handler, option, problem, fix);
  };
  const raw = options ?? {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    fail('(options)', `expected an object, got ${typeof raw}`, 'Pass an object or nothing.');
  }
  for (const key of Object.keys(raw)) {
    if (!KNOWN_KEYS.has(key)) fail(key, 'unknown option', `Known: ${[...KNOWN_KEYS].join(', ')}.`);
  }
  const consumer = raw.consumer ?? defaultConsumerName(className, methodName);
  const nameProblem = consumerNameProblem(consumer);
  if (nameProblem)
    fail('consumer', nameProblem, 'Give a stable, unique name such as "billing.orders".');
  const settings: IdempotentHandlerSettings = { handler, consumer };
  if (raw.maxFailures !== undefined) {
    if (!Number.isSafeInteger(raw.maxFailures) || raw.maxFailures < 1) {
      fail(
        'maxFailures',
        `expected an integer >= 1, got ${JSON.stringify(raw.maxFailures)}`,
        'Use 1 or more.',
      );
    }
    settings.maxFailures = raw.maxFailures;
  }
  if (raw.deadLetterTopic !== undefined) {
    if (raw.deadLetterTopic !== false && topicNameProblem(raw.deadLetterTopic) !== undefined) {
      fail(
        'deadLetterTopic',
        `${JSON.stringify(raw.deadLetterTopic)} is not a valid Kafka topic name: it ${topicNameProblem(raw.deadLetterTopic)}`,
        'Use 1-249 characters from a-z, A-Z, 0-9, ".", "_" and "-", or false for none.',
      );
    }
    settings.deadLetterTopic = raw.deadLetterTopic;
  }
  if (raw.eventId !== undefined) {
    if (typeof raw.eventId !== 'function') {
      fail(
        'eventId',
        `expected a function, got ${typeof raw.eventId}`,
        'Pass (message, payload) => string | undefined.',
      );
    }
    settings.eventId = raw.eventId;
  }
  if (raw.validate !== undefined) {
    if (typeof raw.validate !== 'function') {
      fail(
        'validate',
        `expected a class or a function, got ${typeof raw.validate}`,
        'Pass a DTO class or (payload) => boolean | string | void.',
      );
    }
    if (isClass(raw.validate)) {
      try {
        requireClassValidation();
      } catch (error) {
        fail('validate', (error as Error).message, 'Install them, or pass a function instead.');
      }
    }
    settings.validate = raw.validate;
  }
  if (raw.connectionName !== undefined) {
    if (typeof raw.connectionName !== 'string' || raw.connectionName.length === 0) {
      fail(
        'connectionName',
        `expected a non-empty string, got ${JSON.stringify(raw.connectionName)}`,
        'Use the connectionName given to OutboxModule.forRoot, or leave it out.',
      );
    }
    settings.connectionName = raw.connectionName;
  }
  return settings;
}

/** The settings of one call: the handler's own, else the module's defaults. */
export function mergeWithDefaults(
  handler: IdempotentHandlerSettings,
  defaults: ResolvedConsumerOptions,
): ConsumeSettings {
  const topic =
    handler.deadLetterTopic === false
      ? undefined
      : (handler.deadLetterTopic ?? defaults.deadLetterTopic);
  return {
    consumer: handler.consumer,
    maxFailures: handler.maxFailures ?? defaults.maxFailures,
    eventIdHeader: defaults.eventIdHeader,
    eventIdFallback: handler.eventId ?? defaults.eventIdFallback,
    validate: handler.validate,
    ...(topic ? { deadLetterTopic: topic } : {}),
  };
}
