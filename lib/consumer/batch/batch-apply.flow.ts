import { describeError } from '../../common/errors/describe-error';
import { outboxDiagnostics } from '../../diagnostics/outbox.diagnostics';
import type { ConsumeDeps } from '../flow/idempotent-consume.flow';
import {
  ConsumeBatch,
  runInBatch,
  type BatchAbortedError,
  type BatchEntry,
} from './consume-batch.scope';

export type BatchResult =
  { committed: true; entries: BatchEntry[] } | { committed: false; error: BatchAbortedError };

/**
 * Applies a batch of one consumer's events in ONE transaction: `deliverAll` runs each delivery
 * in order (through its pipeline, down to `consumeInBatch`) inside the transaction and the batch's
 * scope; the dedupe records and every handler's writes commit together, or none do.
 *
 * Committed: counted as applied, one by one. Not committed (an event failed, the budget ran out,
 * `deliverAll` threw, the transaction was retried after a transient error, the commit failed):
 * the transaction is aborted (or its outcome unknown: the dedupe records make the per-event pass
 * skip what did commit) and the caller applies the events again one at a time. The body never
 * runs twice: a transient error falls back rather than re-running every handler of the batch.
 */
export async function applyBatch(
  consumer: string,
  budgetMs: number,
  deps: Pick<ConsumeDeps, 'runner' | 'sink' | 'metrics' | 'logger'>,
  deliverAll: () => Promise<void>,
  now: () => number = Date.now,
): Promise<BatchResult> {
  const batch = new ConsumeBatch(consumer, deps.runner, now() + budgetMs, now);
  let bodies = 0;
  try {
    await deps.runner.run(async () => {
      if (++bodies > 1) throw batch.fail('its transaction was to be retried (transient error)');
      await runInBatch(batch, deliverAll);
      if (batch.failed) throw batch.failed;
    });
  } catch (error) {
    const aborted = batch.failed ?? batch.fail(describeError(error), error);
    deps.metrics.batchFallbacks++;
    deps.logger.debug(aborted.message);
    return { committed: false, error: aborted };
  }
  deps.sink.databaseAccepted();
  deps.metrics.batches++;
  for (const entry of batch.entries) {
    deps.metrics.applied++;
    outboxDiagnostics.consumerApplied(consumer, entry.eventId, entry.message);
    await deps.sink.clearFailures(consumer, entry.eventId);
  }
  return { committed: true, entries: batch.entries };
}
