import { OptionChecker, type OptionKeys } from '../common/options/option.checker';
import {
  checkDeadLetterTopic,
  CONSUMER_LIMITS,
  type ResolvedConsumerOptions,
} from './consumer.options';
import { IdempotentHandlerOptionsError } from './consumer.errors';
import { hasControlCharacters, type EventIdFallback } from './input/event-id.extractor';
import type { ConsumeSettings } from './flow/idempotent-consume.flow';
import {
  optionalClassValidation,
  requireClassValidation,
  type DtoValidatorOptions,
  type PayloadDtoClass,
  type PayloadValidateOption,
} from './input/payload.validator';

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
export interface IdempotentHandlerSettings extends Omit<IdempotentHandlerOptions, 'consumer'> {
  /** `ClassName.methodName`, for messages. */
  handler: string;
  consumer: string;
  /** False when `consumer` is the default `ClassName.methodName`. */
  consumerNamed: boolean;
}

const HANDLER_KEYS = {
  consumer: true,
  maxFailures: true,
  handlerTimeoutMs: true,
  deadLetterTopic: true,
  eventId: true,
  dto: true,
  validatorOptions: true,
  validate: true,
  connectionName: true,
} as const satisfies OptionKeys<IdempotentHandlerOptions>;

const MAX_CONSUMER_NAME_LENGTH = 200;

/** Why `name` cannot be a consumer name, or undefined when it can. */
export function consumerNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return `must be a string, got ${typeof name}`;
  if (name.trim().length === 0) return 'must not be empty';
  if (name.length > MAX_CONSUMER_NAME_LENGTH) {
    return `must be at most ${MAX_CONSUMER_NAME_LENGTH} characters`;
  }
  if (hasControlCharacters(name)) return 'must not contain control characters';
  return undefined;
}

/**
 * Checks the decorator's options when the class is defined; throws `IdempotentHandlerOptionsError`.
 * The default consumer name is `ClassName.methodName`, stable across restarts and instances.
 */
export function resolveHandlerOptions(
  className: string,
  methodName: string,
  options: IdempotentHandlerOptions | undefined,
): IdempotentHandlerSettings {
  const handler = `${className}.${methodName}`;
  const check = new OptionChecker('', (option, problem, fix) => {
    throw new IdempotentHandlerOptionsError(handler, option || '(options)', problem, fix);
  });
  const raw = check.object<IdempotentHandlerOptions>(
    '',
    options ?? {},
    HANDLER_KEYS,
    'Pass an object or nothing.',
  );
  const consumer = raw.consumer ?? handler;
  check.check(
    'consumer',
    consumerNameProblem(consumer),
    'Give a stable, unique name such as "billing.orders".',
  );
  /** `value` as `read` checks it; an option left out stays out. */
  const given = <V>(value: unknown, read: (value: unknown) => V) =>
    value === undefined ? undefined : read(value);
  const settings: IdempotentHandlerSettings = {
    handler,
    consumer,
    consumerNamed: raw.consumer !== undefined,
    maxFailures: given(raw.maxFailures, (value) =>
      check.int('maxFailures', value, 0, { min: 1 }, 'Use 1 or more.'),
    ),
    handlerTimeoutMs: given(raw.handlerTimeoutMs, (value) =>
      check.durationMs(
        'handlerTimeoutMs',
        value,
        0,
        CONSUMER_LIMITS.handlerTimeoutMs,
        "Give the longest run of one attempt, below the Kafka consumer's sessionTimeout.",
      ),
    ),
    deadLetterTopic: given(raw.deadLetterTopic, (value) =>
      value === false
        ? false
        : checkDeadLetterTopic(check, 'deadLetterTopic', value, ', or false for none'),
    ),
    eventId: check.fn<EventIdFallback>(
      'eventId',
      raw.eventId,
      'Pass (message, payload) => string | undefined.',
    ),
    dto: given(raw.dto, (dto) => {
      // A class has a prototype object; an arrow function has none.
      if (typeof dto !== 'function' || typeof dto.prototype !== 'object') {
        check.fail(
          'dto',
          `expected a class, got ${typeof dto}`,
          'Pass a class-validator DTO class.',
        );
      }
      try {
        requireClassValidation();
      } catch (error) {
        check.fail(
          'dto',
          (error as Error).message,
          'Install them, or check payloads with validate instead.',
        );
      }
      return dto as PayloadDtoClass;
    }),
    validatorOptions: given(raw.validatorOptions, (value) => {
      if (raw.dto === undefined) {
        check.fail(
          'validatorOptions',
          'is set without dto',
          'Give dto, or leave validatorOptions out.',
        );
      }
      if (typeof value !== 'object' || value === null) {
        check.fail(
          'validatorOptions',
          `expected an object, got ${typeof value}`,
          'Pass class-validator options.',
        );
      }
      return { ...(value as DtoValidatorOptions) };
    }),
    validate: given(raw.validate, (value) => {
      const validate = check.fn<PayloadValidateOption>(
        'validate',
        value,
        'Pass (payload) => boolean | string | void.',
      )!;
      if (optionalClassValidation()?.hasConstraints(validate)) {
        check.fail(
          'validate',
          `${validate.name} is a class-validator DTO class, and validate takes a function`,
          `Pass it as dto: ${validate.name}.`,
        );
      }
      return validate;
    }),
    connectionName: check.text(
      'connectionName',
      raw.connectionName,
      undefined,
      'Use the connectionName given to OutboxModule.forRoot, or leave it out.',
    ),
  };
  // Only the options given: `undefined` is not a setting.
  for (const key of Object.keys(settings) as Array<keyof IdempotentHandlerSettings>) {
    if (settings[key] === undefined) delete settings[key];
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
