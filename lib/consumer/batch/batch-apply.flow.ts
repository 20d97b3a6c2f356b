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
 * scope, then the `(consumer, eventId)` records are inserted in one command; the records and every
 * handler's writes commit together, or none do. Events of `eventIds` already applied (one read
 * first) send the batch to the per-event pass before any handler runs.
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
  deps: Pick<ConsumeDeps, 'runner' | 'processed' | 'sink' | 'metrics' | 'logger' | 'tenancy'>,
  /** The event ids read from the messages' headers ahead (undefined: not known before). */
  eventIds: readonly (string | undefined)[],
  deliverAll: () => Promise<void>,
  now: () => number = Date.now,
): Promise<BatchResult> {
  const batch = new ConsumeBatch(
    consumer,
    deps.runner,
    now() + budgetMs,
    now,
    deps.tenancy?.tenant,
  );
  let bodies = 0;
  try {
    // A redelivery of events already applied (after a crash between a commit and its offsets)
    // goes one at a time, so that no handler runs again for them, even inside an aborted batch.
    const known = eventIds.filter((id): id is string => typeof id === 'string');
    const applied = known.length > 0 ? await deps.processed.appliedAmong(consumer, known) : [];
    if (applied.length > 0) throw batch.fail(`event ${applied[0]} was already applied`);
    await deps.runner.run(async () => {
      if (++bodies > 1) throw batch.fail('its transaction was to be retried (transient error)');
      await runInBatch(batch, deliverAll);
      if (batch.failed) throw batch.failed;
      const ids = batch.entries.map((entry) => entry.eventId);
      // One command for every record; a duplicate (applied meanwhile) aborts the batch.
      if (ids.length > 0) await deps.processed.insertMany(consumer, ids);
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
