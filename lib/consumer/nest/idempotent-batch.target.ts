import { IDEMPOTENT_HANDLER_EXTRAS } from '../../common/outbox.constants';
import { currentBatch } from '../batch/consume-batch.scope';
import type { IdempotentHandlerSettings } from '../idempotent-handler.options';
import {
  IdempotentHandlerBindings,
  type IdempotentHandlerRuntimeApi,
} from './idempotent-handler.bindings';

/** Where a message can be batched: its handler's settings and the runtime serving them. */
export interface IdempotentBatchTarget {
  runtime: IdempotentHandlerRuntimeApi;
  settings: IdempotentHandlerSettings;
}

/**
 * The batch target of a Nest pattern handler (what the transport's `getHandlerByPattern`
 * returns): an `@IdempotentHandler` method (its settings travel in the pattern extras) that is
 * the only handler of its pattern, bound to a runtime whose `consumer.batch.maxEvents` is above 1.
 * Undefined otherwise: the message is delivered on its own, as before.
 */
export function idempotentBatchTargetOf(handler: unknown): IdempotentBatchTarget | undefined {
  if (typeof handler !== 'function') return undefined;
  const { extras, next } = handler as { extras?: Record<string, unknown>; next?: unknown };
  if (next) return undefined; // several handlers of one pattern: each delivery runs them all
  const settings = extras?.[IDEMPOTENT_HANDLER_EXTRAS] as IdempotentHandlerSettings | undefined;
  if (!settings) return undefined;
  const runtime = IdempotentHandlerBindings.resolve(settings);
  if (!runtime || runtime.batchLimits.maxEvents < 2) return undefined;
  return { runtime, settings };
}

/** True when one of a transport's pattern handlers is an `@IdempotentHandler` (may batch). */
export function anyIdempotentHandler(handlers: Iterable<unknown>): boolean {
  for (const handler of handlers) {
    for (let h = handler as { extras?: Record<string, unknown>; next?: unknown } | undefined; h;) {
      if (h.extras?.[IDEMPOTENT_HANDLER_EXTRAS]) return true;
      h = h.next as typeof h;
    }
  }
  return false;
}

/** True when the running batch already failed (its other deliveries need not run). */
export function currentBatchFailed(): boolean {
  return currentBatch()?.failed !== undefined;
}
