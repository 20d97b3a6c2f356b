import { setTimeout as sleep } from 'node:timers/promises';
import { describeError } from '../../common/errors/describe-error';
import { outboxDiagnostics } from '../../diagnostics/outbox.diagnostics';
import type { ConsumedMessage } from '../input/consumed-message';
import type {
  ConsumeOutcome,
  ConsumerTransactionRunner,
  DeadLetter,
  DeadLetterPublisher,
  FlowLogger,
  ProcessedEventStore,
} from '../consume.ports';
import type { DeadLetterReason } from '../../documents/consumer-dead-letter.document';
import type { OutboxConsumerMetrics } from './consumer.metrics';
import { backoffDelay } from '../../common/backoff';
import { SinkUnavailableError, type ConsumerSink } from './consumer-sink';
import { isDatabaseUnavailable } from './database-outage';
import { isUnrecoverableEventError } from '../consumer.errors';
import { extractEventId, type EventIdFallback } from '../input/event-id.extractor';
import { runAttempt } from './handler-attempt';
import { decodePayload } from '../input/payload.decoder';
import {
  validatePayload,
  type ClassValidation,
  type PayloadChecks,
} from '../input/payload.validator';

/** Everything one handler's consumption depends on (handler options over module defaults). */
export interface ConsumeSettings extends PayloadChecks {
  handler: string;
  consumer: string;
  maxFailures: number;
  retryBackoff: { initialMs: number; maxMs: number };
  handlerTimeoutMs: number;
  eventIdHeader: string;
  eventIdFallback?: EventIdFallback;
  deadLetterTopic?: string;
}

export interface ConsumeDeps {
  runner: ConsumerTransactionRunner;
  processed: ProcessedEventStore;
  sink: ConsumerSink;
  metrics: OutboxConsumerMetrics;
  logger: FlowLogger;
  /** Where a dead letter's topic copy goes (the transport's producer). */
  publisher?: DeadLetterPublisher;
  sleep?: (ms: number) => Promise<void>;
  classValidation?: () => ClassValidation;
  /**
   * Set with the `tenants` option: the message's tenant (its `ce_tenant` header), whose database
   * `processed` and `sink` write to, or why it has none (the message is then dead-lettered
   * `missing-tenant`, in the app's database).
   */
  tenancy?: Tenancy;
}

/** A message's tenant under the `tenants` option: the tenant, or the problem. */
export type Tenancy = { tenant: string } | { tenant?: undefined; problem: string };

/** One delivery of one message, as the transport hands it over. */
export interface Delivery {
  message: ConsumedMessage;
  /** kafkajs' heartbeat: keeps the group membership between attempts; throws during a rebalance. */
  heartbeat(): Promise<void>;
}

/**
 * The delivery cannot end now (see `ConsumerRetryError`): it must not be acknowledged. With
 * `pauseMs`, the partition is paused that long first.
 */
export class RedeliveryRequired extends Error {
  constructor(
    message: string,
    readonly pauseMs: number | undefined,
    override readonly cause: unknown,
  ) {
    super(message);
    this.name = 'RedeliveryRequired';
  }
}

/** Why a message is dead-lettered: its event id (if any), the reason and the detail. */
export interface Refusal {
  eventId: string | null;
  reason: DeadLetterReason;
  detail: string;
}

export type CheckedInput =
  { ok: true; eventId: string; payload: unknown } | ({ ok: false } & Refusal);

/** One delivery being consumed, as every step below sees it. */
interface Consumption {
  message: ConsumedMessage;
  settings: ConsumeSettings;
  deps: ConsumeDeps;
}

/**
 * What `@IdempotentHandler` does with one delivery; it ends in `applied`, `duplicate` or
 * `dead-lettered`, or throws `RedeliveryRequired`:
 * 1. decode the value safely, read the event id, run `dto`/`validate`; a problem: dead-letter;
 * 2. attempt (`runAttempt`): one transaction with the `(consumer, eventId)` insert and the
 *    handler. A duplicate key means already applied;
 * 3. a failed attempt is counted outside the transaction (unless MongoDB itself was
 *    unavailable: then nothing is counted and the delivery ends unacknowledged with a pause);
 *    `UnrecoverableEventError`, or the `maxFailures`th failure, dead-letters; otherwise the next
 *    attempt follows in the same delivery after `retryBackoff`, with a kafkajs heartbeat in
 *    between (a rebalance ends the delivery unacknowledged: the next owner of the partition
 *    continues the count).
 * The store refusing a write ends the delivery unacknowledged with a pause (`RedeliveryRequired`).
 */
export async function consumeIdempotently(
  delivery: Delivery,
  settings: ConsumeSettings,
  handler: (payload: unknown) => unknown,
  deps: ConsumeDeps,
): Promise<ConsumeOutcome> {
  const run: Consumption = { message: delivery.message, settings, deps };
  const admitted = await admit(run);
  if ('ended' in admitted) return admitted.ended;
  const { eventId, payload } = admitted;
  for (let attempt = 1; ; attempt++) {
    const result = await runAttempt(
      {
        handler: settings.handler,
        consumer: settings.consumer,
        eventId,
        attempt,
        ...(deps.tenancy?.tenant !== undefined ? { tenant: deps.tenancy.tenant } : {}),
        timeoutMs: settings.handlerTimeoutMs,
        run: () => handler(payload),
      },
      deps.runner,
      deps.processed,
    );
    if (result.kind !== 'failed') deps.sink.databaseAccepted();
    if (result.kind === 'duplicate') {
      deps.logger.debug(
        `${settings.consumer}: event ${eventId} was already applied; skipped (${where(run.message)})`,
      );
      return skipped(run, eventId);
    }
    if (result.durationMs !== undefined) deps.metrics.handlerDuration(result.durationMs);
    if (result.kind === 'applied') {
      deps.metrics.applied++;
      outboxDiagnostics.consumerApplied(settings.consumer, eventId, run.message);
      await deps.sink.clearFailures(settings.consumer, eventId);
      return { kind: 'applied', result: result.result };
    }
    if (isDatabaseUnavailable(result.error)) {
      throw unavailable(run, eventId, deps.sink.databaseUnavailable(result.error));
    }
    if (result.timedOut) deps.metrics.timeouts++;
    const failed = await countFailure(run, eventId, result.error);
    if ('ended' in failed) return failed.ended;
    attempt = failed.failures;
    const delay = backoffDelay(attempt, settings.retryBackoff);
    deps.logger.warn(
      `${settings.consumer}: event ${eventId} failed (${attempt} of ${settings.maxFailures}), ` +
        `retrying in ${delay} ms: ${describeError(result.error)}`,
    );
    // Heartbeats around the backoff: the group session never spans more than one attempt.
    await heartbeat(delivery, settings, eventId);
    await (deps.sleep ?? sleep)(delay);
    await heartbeat(delivery, settings, eventId);
  }
}

/** kafkajs' heartbeat; during a rebalance it throws: the delivery then ends unacknowledged. */
async function heartbeat(
  delivery: Delivery,
  settings: ConsumeSettings,
  eventId: string,
): Promise<void> {
  try {
    await delivery.heartbeat();
  } catch (error) {
    throw new RedeliveryRequired(
      `${settings.consumer}: Kafka heartbeat failed between attempts at ${eventId} (${describeError(error)}); the message will be delivered again`,
      undefined,
      error,
    );
  }
}

/**
 * A failure Nest raised before the handler method ran (a guard, a pipe, an interceptor): counted
 * like a handler failure. Below `maxFailures` the message is delivered again after a pause of the
 * retry backoff (`RedeliveryRequired`), since only a new delivery runs Nest's pipeline again.
 */
export async function consumeRejected(
  delivery: Delivery,
  settings: ConsumeSettings,
  error: unknown,
  deps: ConsumeDeps,
): Promise<ConsumeOutcome> {
  const run: Consumption = { message: delivery.message, settings, deps };
  const admitted = await admit(run);
  if ('ended' in admitted) return admitted.ended;
  const { eventId } = admitted;
  // A copy of an event already applied (a redelivery, a relay duplicate) is skipped as the
  // handler path skips it: whatever rejects it now must not count it, nor dead-letter it.
  if (await alreadyApplied(run, eventId)) return skipped(run, eventId);
  const failed = await countFailure(run, eventId, error);
  if ('ended' in failed) return failed.ended;
  const { failures } = failed;
  const delay = backoffDelay(failures, settings.retryBackoff);
  deps.logger.warn(
    `${settings.consumer}: event ${eventId} was rejected before the handler ran (${failures} of ` +
      `${settings.maxFailures}), delivering it again in ${delay} ms: ${describeError(error)}`,
  );
  throw new RedeliveryRequired(
    `${settings.consumer}: event ${eventId} was rejected before the handler ran (${failures} of ${settings.maxFailures})`,
    delay,
    error,
  );
}

function skipped({ message, settings, deps }: Consumption, eventId: string): ConsumeOutcome {
  deps.metrics.duplicates++;
  outboxDiagnostics.consumerSkipped(settings.consumer, eventId, message);
  return { kind: 'duplicate', eventId };
}

/**
 * Whether the event was applied. A database that is unavailable ends the delivery
 * unacknowledged (as on the handler path); any other error of the read counts the rejection as
 * before (its failure count and dead letter still bound it).
 */
async function alreadyApplied(run: Consumption, eventId: string): Promise<boolean> {
  try {
    const applied = await run.deps.processed.wasApplied(run.settings.consumer, eventId);
    run.deps.sink.databaseAccepted();
    return applied;
  } catch (error) {
    if (isDatabaseUnavailable(error)) {
      throw unavailable(run, eventId, run.deps.sink.databaseUnavailable(error));
    }
    return false;
  }
}

/**
 * What every delivery starts with: a dead letter of this message still waiting for the store is
 * written first; a message with bad input is dead-lettered. Otherwise, its event id and payload.
 */
async function admit(
  run: Consumption,
): Promise<{ ended: ConsumeOutcome } | { eventId: string; payload: unknown }> {
  const pending = run.deps.sink.pendingDeadLetter(run.settings.consumer, run.message);
  if (pending) return { ended: await storeDeadLetter(run, pending) };
  const input = await checkInput(run);
  if (!input.ok) return { ended: await deadLetter(run, input, 0) };
  return input;
}

/** Decodes the value, reads the event id, runs `dto`/`validate`: the payload, or why not. */
export async function checkInput({
  message,
  settings,
  deps,
}: Pick<Consumption, 'message' | 'settings' | 'deps'>): Promise<CheckedInput> {
  const decoded = decodePayload(message.value);
  const id = extractEventId(
    message,
    settings.eventIdHeader,
    settings.eventIdFallback,
    decoded.ok ? decoded.payload : undefined,
  );
  if (!id.ok) return { ...id, eventId: null };
  if (deps.tenancy && deps.tenancy.tenant === undefined) {
    return {
      ok: false,
      eventId: id.eventId,
      reason: 'missing-tenant',
      detail: deps.tenancy.problem,
    };
  }
  if (!decoded.ok) return { ...decoded, eventId: id.eventId };
  const validated = await validatePayload(decoded.payload, settings, deps.classValidation);
  if (!validated.ok) return { ...validated, eventId: id.eventId };
  return { ok: true, eventId: id.eventId, payload: validated.payload };
}

/**
 * Counts a failure of the event; `UnrecoverableEventError`, or the `maxFailures`th failure,
 * dead-letters it.
 */
async function countFailure(
  run: Consumption,
  eventId: string,
  error: unknown,
): Promise<{ ended: ConsumeOutcome } | { failures: number }> {
  const { message, settings, deps } = run;
  deps.metrics.failures++;
  const detail = describeError(error);
  let failures: number;
  try {
    failures = await deps.sink.recordFailure(
      settings.consumer,
      eventId,
      { at: new Date(), error: detail },
      message,
    );
  } catch (sinkError) {
    throw unavailable(run, eventId, sinkError, error);
  }
  const unrecoverable = isUnrecoverableEventError(error);
  if (!unrecoverable && failures < settings.maxFailures) return { failures };
  const reason = unrecoverable ? 'unrecoverable' : 'max-failures';
  return { ended: await deadLetter(run, { eventId, reason, detail }, failures) };
}

function deadLetter(
  run: Consumption,
  { eventId, reason, detail }: Refusal,
  attempts: number,
): Promise<ConsumeOutcome> {
  const letter: DeadLetter = {
    consumer: run.settings.consumer,
    eventId,
    reason,
    attempts,
    lastError: detail,
    at: new Date(),
    message: run.message,
  };
  return storeDeadLetter(run, letter);
}

async function storeDeadLetter(run: Consumption, letter: DeadLetter): Promise<ConsumeOutcome> {
  const { settings, deps } = run;
  try {
    await deps.sink.deadLetter(letter, settings.deadLetterTopic, deps.publisher);
  } catch (error) {
    throw unavailable(run, letter.eventId, error);
  }
  deps.metrics.deadLettered++;
  outboxDiagnostics.consumerDeadLettered(letter);
  const line =
    `${settings.consumer}: dead-lettered ${where(letter.message)}` +
    (letter.eventId ? ` (event ${letter.eventId})` : '') +
    `: ${letter.reason}: ${letter.lastError}` +
    (letter.topicCopy && !letter.topicCopy.published ? ' (no copy on the dead-letter topic)' : '');
  if (letter.reason === 'max-failures' || letter.reason === 'unrecoverable')
    deps.logger.error(line);
  else deps.logger.warn(line);
  return { kind: 'dead-lettered', eventId: letter.eventId, reason: letter.reason };
}

function unavailable(
  { settings, deps }: Consumption,
  eventId: string | null,
  sinkError: unknown,
  cause?: unknown,
): RedeliveryRequired {
  const what = eventId ? `event ${eventId}` : 'a message';
  return new RedeliveryRequired(
    `${settings.consumer}: ${what} cannot be brought to an end now (${describeError(sinkError)})`,
    sinkError instanceof SinkUnavailableError ? deps.sink.retryDelayMs() : undefined,
    cause ?? sinkError,
  );
}

function where(message: ConsumedMessage): string {
  return `${message.topic}[${message.partition}]@${message.offset}`;
}
