import { describeError } from '../../common/errors/describe-error';
import type { ConsumeOutcome } from '../consume.ports';
import { runAttempt } from '../flow/handler-attempt';
import {
  checkInput,
  type ConsumeDeps,
  type ConsumeSettings,
  type Delivery,
} from '../flow/idempotent-consume.flow';
import type { ConsumeBatch } from './consume-batch.scope';

/**
 * One delivery inside a batch: the event's handler joins the batch's transaction, with what is
 * left of the batch's budget as its timeout; its `(consumer, eventId)` record is inserted with the
 * others' before the commit (`applyBatch`). It writes nothing else and counts nothing: anything
 * but a clean application (bad input, a dead letter waiting, the same event twice in the batch, a
 * throw, a timeout, a database error) fails the batch, whose transaction
 * is then aborted and whose events are applied again one at a time by `consumeIdempotently`,
 * which counts, retries and dead-letters as it always does. Returns `applied` (committed only if
 * the batch commits) or throws the batch's `BatchAbortedError`.
 */
export async function consumeInBatch(
  delivery: Delivery,
  settings: ConsumeSettings,
  handler: (payload: unknown) => unknown,
  deps: ConsumeDeps,
  batch: ConsumeBatch,
): Promise<ConsumeOutcome> {
  if (batch.failed) throw batch.failed;
  const { message } = delivery;
  if (batch.consumer !== settings.consumer || batch.owner !== deps.runner) {
    throw batch.fail(`an event of another consumer (${settings.consumer}) reached it`);
  }
  if (deps.tenancy?.tenant !== batch.tenant) {
    throw batch.fail(`an event of another tenant (${String(deps.tenancy?.tenant)}) reached it`);
  }
  if (deps.sink.pendingDeadLetter(settings.consumer, message)) {
    throw batch.fail('a dead letter of one of its messages waits to be stored');
  }
  const input = await checkInput({ message, settings, deps });
  if (!input.ok) throw batch.fail(`a message is refused: ${input.reason}`);
  const timeoutMs = batch.remainingMs();
  if (timeoutMs <= 0) throw batch.fail('its time budget (handlerTimeoutMs) is spent');
  const { eventId, payload } = input;
  if (batch.entries.some((entry) => entry.eventId === eventId)) {
    throw batch.fail(`event ${eventId} is twice in it`);
  }
  const result = await runAttempt(
    {
      handler: settings.handler,
      consumer: settings.consumer,
      eventId,
      attempt: 1,
      ...(batch.tenant !== undefined ? { tenant: batch.tenant } : {}),
      timeoutMs,
      run: () => handler(payload),
    },
    deps.runner,
    // Its `(consumer, eventId)` record is written with the others', in one command at the end.
    { insert: async () => undefined },
  );
  if (result.kind === 'duplicate') throw batch.fail(`event ${eventId} was already applied`);
  if (result.durationMs !== undefined) deps.metrics.handlerDuration(result.durationMs);
  if (result.kind === 'failed') {
    throw batch.fail(`event ${eventId} failed: ${describeError(result.error)}`, result.error);
  }
  batch.entries.push({ eventId, message });
  return { kind: 'applied', result: result.result };
}
