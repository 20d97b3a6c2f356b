import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * A fence around a piece of asynchronous work (an `@IdempotentHandler` attempt): once its signal
 * is aborted, code still running inside it (a handler that outlived its timeout, and whatever it
 * awaits) can no longer start or join an outbox transaction. `TransactionRunner` checks it, so
 * a `@Transactional()` method called by a timed-out handler fails instead of committing on its
 * own after the attempt was given up and retried.
 */
const fences = new AsyncLocalStorage<AbortSignal>();

export function runFenced<T>(signal: AbortSignal, fn: () => T): T {
  return fences.run(signal, fn);
}

/** Throws the abort reason when called from fenced work whose signal was aborted. */
export function throwIfFenced(): void {
  const signal = fences.getStore();
  if (signal?.aborted) throw signal.reason;
}
