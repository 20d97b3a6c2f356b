import { topicNameProblem } from '../publisher/topic-name';
import { consumerNameProblem, defaultConsumerName } from './consumer-name';
import { CONSUMER_LIMITS, type ResolvedConsumerOptions } from './consumer.options';
import { IdempotentHandlerOptionsError } from './errors/idempotent-handler-options.error';
import type { EventIdFallback } from './event-id.extractor';
import type { ConsumeSettings } from './idempotent-consume.flow';
import {
  optionalClassValidation,
  requireClassValidation,
  type DtoValidatorOptions,
  type PayloadDtoClass,
  type PayloadValidateOption,
} from './payload.validator';

/** Options of `@IdempotentHandler(...)`; unset ones take the module's `consumer` defaults. */
export interface IdempotentHandlerOptions {
  /**
   * The consumer name: the dedupe key is `(consumer, eventId)`, so it must be unique per database
   * across every service. Default `ClassName.methodName`, which changes when either is renamed or
   * a minifier rewrites class names: set it explicitly, or the events are applied again.
   */
  consumer?: string;
  /** Failures of one event before it is dead-lettered. Default: `consumer.maxFailures` (5). */
  maxFailures?: number;
  /** Longest run of one attempt, ms. Default: `consumer.handlerTimeoutMs` (20 000). */
  handlerTimeoutMs?: number;
  /** Kafka topic for dead-letter copies; `false` for none. Default: `consumer.deadLetterTopic`. */
  deadLetterTopic?: string | false;
  /** Event id of messages without the id header. Default: `consumer.eventIdFallback`. */
  eventId?: EventIdFallback;
  /**
   * A class-validator DTO class: the payload is turned into an instance (class-transformer) and
   * checked (class-validator, with `validatorOptions`); the handler receives the instance. A
   * payload that fails is dead-lettered, not retried.
   */
  dto?: PayloadDtoClass;
  /** class-validator options for `dto`. Default `{ whitelist: true, forbidUnknownValues: true }`. */
  validatorOptions?: DtoValidatorOptions;
  /**
   * A function that rejects bad payloads (they are dead-lettered, not retried) by returning
   * `false` or a message, or by throwing. Runs after `dto`, on the decoded payload.
   */
  validate?: PayloadValidateOption;
  /**
   * The `OutboxModule` (by its `connectionName`) whose connection runs the handler's transaction.
   * Default: the module of the default connection, or the only one.
   */
  connectionName?: string;
}

/** The checked options of one decorated method. One object per method: it identifies it. */
export interface IdempotentHandlerSettings {
  /** `ClassName.methodName`, for messages. */
  handler: string;
  consumer: string;
  /** False when `consumer` is the default `ClassName.methodName`. */
  consumerNamed: boolean;
  maxFailures?: number;
  handlerTimeoutMs?: number;
  deadLetterTopic?: string | false;
  eventId?: EventIdFallback;
  dto?: PayloadDtoClass;
  validatorOptions?: DtoValidatorOptions;
  validate?: PayloadValidateOption;
  connectionName?: string;
}

const KNOWN_KEYS = new Set([
  'consumer',
  'maxFailures',
  'handlerTimeoutMs',
  'deadLetterTopic',
  'eventId',
  'dto',
  'validatorOptions',
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
  if (nameProblem) {
    fail('consumer', nameProblem, 'Give a stable, unique name such as "billing.orders".');
  }
  const settings: IdempotentHandlerSettings = {
    handler,
    consumer,
    consumerNamed: raw.consumer !== undefined,
  };
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
  if (raw.handlerTimeoutMs !== undefined) {
    const { min, max } = CONSUMER_LIMITS.handlerTimeoutMs;
    const value = raw.handlerTimeoutMs;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      fail(
        'handlerTimeoutMs',
        `expected an integer from ${min} to ${max} (ms), got ${JSON.stringify(value)}`,
        "Give the longest run of one attempt, below the Kafka consumer's sessionTimeout.",
      );
    }
    settings.handlerTimeoutMs = value;
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
  if (raw.dto !== undefined) {
    // A class has a prototype object; an arrow function has none.
    if (typeof raw.dto !== 'function' || typeof raw.dto.prototype !== 'object') {
      fail('dto', `expected a class, got ${typeof raw.dto}`, 'Pass a class-validator DTO class.');
    }
    try {
      requireClassValidation();
    } catch (error) {
      fail(
        'dto',
        (error as Error).message,
        'Install them, or check payloads with validate instead.',
      );
    }
    settings.dto = raw.dto;
  }
  if (raw.validatorOptions !== undefined) {
    if (raw.dto === undefined) {
      fail('validatorOptions', 'is set without dto', 'Give dto, or leave validatorOptions out.');
    }
    if (typeof raw.validatorOptions !== 'object' || raw.validatorOptions === null) {
      fail(
        'validatorOptions',
        `expected an object, got ${typeof raw.validatorOptions}`,
        'Pass class-validator options.',
      );
    }
    settings.validatorOptions = { ...raw.validatorOptions };
  }
  if (raw.validate !== undefined) {
    if (typeof raw.validate !== 'function') {
      fail(
        'validate',
        `expected a function, got ${typeof raw.validate}`,
        'Pass (payload) => boolean | string | void.',
      );
    }
    if (optionalClassValidation()?.hasConstraints(raw.validate)) {
      fail(
        'validate',
        `${raw.validate.name} is a class-validator DTO class, and validate takes a function`,
        `Pass it as dto: ${raw.validate.name}.`,
      );
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
    handler: handler.handler,
    consumer: handler.consumer,
    maxFailures: handler.maxFailures ?? defaults.maxFailures,
    retryBackoff: defaults.retryBackoff,
    handlerTimeoutMs: handler.handlerTimeoutMs ?? defaults.handlerTimeoutMs,
    eventIdHeader: defaults.eventIdHeader,
    eventIdFallback: handler.eventId ?? defaults.eventIdFallback,
    ...(handler.dto ? { dto: handler.dto } : {}),
    ...(handler.validatorOptions ? { validatorOptions: handler.validatorOptions } : {}),
    ...(handler.validate ? { validate: handler.validate } : {}),
    ...(topic ? { deadLetterTopic: topic } : {}),
  };
}
