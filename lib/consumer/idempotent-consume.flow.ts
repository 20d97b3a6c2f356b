import { isObservable, lastValueFrom } from 'rxjs';
import { describeError } from '../common/errors/describe-error';
import { rawValueText, type ConsumedMessage } from './consumed-message';
import { ConsumerRetryError } from './errors/consumer-retry.error';
import { extractEventId, type EventIdFallback } from './event-id.extractor';
import { decodePayload, type BadPayloadReason } from './payload.decoder';
import {
  validatePayload,
  type ClassValidation,
  type PayloadValidateOption,
} from './payload.validator';

/** Why a message was dead-lettered. */
export type DeadLetterReason =
  BadPayloadReason | 'missing-event-id' | 'invalid-event-id' | 'invalid-payload' | 'handler-failed';

export interface FailureInfo {
  at: Date;
  name: string;
  message: string;
}

export interface DeadLetter {
  consumer: string;
  /** Null when the message had no usable event id. */
  eventId: string | null;
  reason: DeadLetterReason;
  detail: string;
  message: ConsumedMessage;
  /** The raw value as text (see `rawValueText`). */
  value: string | null;
  /** The failure that caused it (`handler-failed`: the last one; the store keeps the history). */
  error: FailureInfo;
}

/** The `(consumer, eventId)` records. `insert` runs inside the handler's transaction. */
export interface ProcessedEventStore {
  /** Rejects with a duplicate-key error (code 11000) when the pair exists. */
  insert(consumer: string, eventId: string): Promise<void>;
}

/** Failure counts and dead letters; every call runs outside the handler's transaction. */
export interface ConsumerFailureStore {
  /** Adds one failure and returns the number of failures of `(consumer, eventId)` so far. */
  recordFailure(
    consumer: string,
    eventId: string,
    failure: FailureInfo,
    message: ConsumedMessage,
  ): Promise<number>;
  /** Forgets the failures of an event that then succeeded (best effort). */
  clearFailures(consumer: string, eventId: string): Promise<void>;
  /** Records a message the consumer gives up on. Idempotent for the same message. */
  deadLetter(letter: DeadLetter): Promise<void>;
}

/** Sends dead letters to a Kafka topic too (optional). */
export interface DeadLetterPublisher {
  publish(topic: string, letter: DeadLetter): Promise<void>;
}

export interface ConsumerTransactionRunner {
  run<T>(fn: () => Promise<T>): Promise<T>;
}

export interface FlowLogger {
  debug(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface ConsumeSettings {
  consumer: string;
  maxFailures: number;
  eventIdHeader: string;
  eventIdFallback?: EventIdFallback;
  validate?: PayloadValidateOption;
  deadLetterTopic?: string;
}

export interface ConsumeDeps {
  runner: ConsumerTransactionRunner;
  processed: ProcessedEventStore;
  failures: ConsumerFailureStore;
  /** Needed only when `settings.deadLetterTopic` is set. */
  deadLetterPublisher?: DeadLetterPublisher;
  logger: FlowLogger;
  classValidation?: () => ClassValidation;
}

export type ConsumeOutcome =
  | { kind: 'applied'; result: unknown }
  | { kind: 'duplicate'; eventId: string }
  | { kind: 'dead-lettered'; eventId: string | null; reason: DeadLetterReason };

/** Signals, from inside the transaction, that the processed record already exists. */
class AlreadyProcessed extends Error {}

/** MongoDB duplicate key (E11000), as the driver or Mongoose surfaces it. */
export function isDuplicateKeyError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; writeErrors?: Array<{ code?: unknown }> };
  return e.code === 11000 || e.code === 11001 || e.writeErrors?.[0]?.code === 11000;
}

/**
 * What `@IdempotentHandler` does with one message (everything but Nest and Mongo, which come in
 * through `deps`):
 * 1. decode the value safely, read the event id, run `validate`; any problem: dead-letter, ack;
 * 2. in one transaction: insert `(consumer, eventId)`, then run the handler. The insert failing on
 *    the unique index means "already applied": the transaction is aborted and the message acked
 *    (`duplicate`); the handler's own writes join the same transaction;
 * 3. the handler (or commit) failing aborts the transaction (no processed record) and counts a
 *    failure outside it; below `maxFailures` a `ConsumerRetryError` is thrown so the transport
 *    redelivers; at `maxFailures` the message is dead-lettered and acked.
 * Storage failures while counting or dead-lettering throw `ConsumerRetryError` too (redelivery).
 */
export async function consumeIdempotently(
  message: ConsumedMessage,
  settings: ConsumeSettings,
  handler: (payload: unknown) => unknown,
  deps: ConsumeDeps,
): Promise<ConsumeOutcome> {
  const { consumer } = settings;
  const decoded = decodePayload(message.value);
  const id = extractEventId(
    message,
    settings.eventIdHeader,
    settings.eventIdFallback,
    decoded.ok ? decoded.payload : undefined,
  );
  const eventId = id.ok ? id.eventId : null;
  if (!id.ok) return giveUp(message, settings, deps, null, id.reason, id.detail);
  if (!decoded.ok) return giveUp(message, settings, deps, eventId, decoded.reason, decoded.detail);
  const validated = await validatePayload(decoded.payload, settings.validate, deps.classValidation);
  if (!validated.ok) {
    return giveUp(message, settings, deps, eventId, validated.reason, validated.detail);
  }
  const key = id.eventId;

  let result: unknown;
  try {
    result = await deps.runner.run(async () => {
      try {
        await deps.processed.insert(consumer, key);
      } catch (error) {
        if (isDuplicateKeyError(error)) throw new AlreadyProcessed();
        throw error;
      }
      return settle(handler(validated.payload));
    });
  } catch (error) {
    if (error instanceof AlreadyProcessed) {
      deps.logger.debug(
        `${consumer}: event ${key} was already applied; skipped (${where(message)})`,
      );
      return { kind: 'duplicate', eventId: key };
    }
    return handlerFailed(message, settings, deps, key, error);
  }
  try {
    await deps.failures.clearFailures(consumer, key);
  } catch (error) {
    deps.logger.debug(`${consumer}: could not clear failures of ${key}: ${describeError(error)}`);
  }
  return { kind: 'applied', result };
}

async function handlerFailed(
  message: ConsumedMessage,
  settings: ConsumeSettings,
  deps: ConsumeDeps,
  eventId: string,
  error: unknown,
): Promise<ConsumeOutcome> {
  const { consumer, maxFailures } = settings;
  const failure = failureInfo(error);
  let failures: number;
  try {
    failures = await deps.failures.recordFailure(consumer, eventId, failure, message);
  } catch (storeError) {
    deps.logger.error(
      `${consumer}: event ${eventId} failed (${failure.message}) and the failure could not be` +
        ` recorded (${describeError(storeError)}); it will be delivered again`,
    );
    throw new ConsumerRetryError(
      `${consumer} failed on event ${eventId}: ${describeError(error)}`,
      { consumer, eventId },
      error,
    );
  }
  if (failures < maxFailures) {
    deps.logger.warn(
      `${consumer}: event ${eventId} failed (${failures} of ${maxFailures}), it will be delivered` +
        ` again: ${describeError(error)}`,
    );
    throw new ConsumerRetryError(
      `${consumer} failed on event ${eventId} (failure ${failures} of ${maxFailures}): ${describeError(error)}`,
      { consumer, eventId, failures, maxFailures },
      error,
    );
  }
  return giveUp(
    message,
    settings,
    deps,
    eventId,
    'handler-failed',
    `failed ${failures} times (maxFailures ${maxFailures}), last: ${describeError(error)}`,
    failure,
  );
}

async function giveUp(
  message: ConsumedMessage,
  settings: ConsumeSettings,
  deps: ConsumeDeps,
  eventId: string | null,
  reason: DeadLetterReason,
  detail: string,
  error?: FailureInfo,
): Promise<ConsumeOutcome> {
  const letter: DeadLetter = {
    consumer: settings.consumer,
    eventId,
    reason,
    detail,
    message,
    value: rawValueText(message.value),
    error: error ?? { at: new Date(), name: reason, message: detail },
  };
  const line =
    `${settings.consumer}: dead-lettered ${where(message)}` +
    (eventId ? ` (event ${eventId})` : '') +
    `: ${reason}: ${detail}`;
  try {
    await deps.failures.deadLetter(letter);
    if (settings.deadLetterTopic) {
      if (!deps.deadLetterPublisher) throw new Error('no producer to reach the dead-letter topic');
      await deps.deadLetterPublisher.publish(settings.deadLetterTopic, letter);
    }
  } catch (sinkError) {
    deps.logger.error(
      `${line}; but writing the dead letter failed, will retry: ${describeError(sinkError)}`,
    );
    throw new ConsumerRetryError(
      `${settings.consumer} could not dead-letter ${where(message)}: ${describeError(sinkError)}`,
      { consumer: settings.consumer, eventId, reason },
      sinkError,
    );
  }
  if (reason === 'handler-failed') deps.logger.error(line);
  else deps.logger.warn(line);
  return { kind: 'dead-lettered', eventId, reason };
}

function failureInfo(error: unknown): FailureInfo {
  return {
    at: new Date(),
    name: error instanceof Error ? error.name : typeof error,
    message: error instanceof Error ? error.message : describeError(error),
  };
}

function where(message: ConsumedMessage): string {
  return `${message.topic}[${message.partition}]@${message.offset}`;
}

/** Awaits a handler result: a promise, an observable (its last value), or a plain value. */
async function settle(result: unknown): Promise<unknown> {
  const value = await result;
  return isObservable(value) ? lastValueFrom(value, { defaultValue: undefined }) : value;
}
