import { AsyncLocalStorage } from 'node:async_hooks';
import type { ConsumedMessage } from '../input/consumed-message';

/**
 * Ends an event's part in a batch: the batch's transaction is aborted and its events are applied
 * again one at a time. Never counted as a failure of the event (the per-event pass counts).
 */
export class BatchAbortedError extends Error {
  constructor(
    readonly consumer: string,
    readonly reason: string,
    override readonly cause: unknown,
  ) {
    super(`${consumer}: batch aborted (${reason}); its events are applied one at a time`);
    this.name = 'BatchAbortedError';
  }
}

/** One event that joined the batch's transaction (applied there if the batch commits). */
export interface BatchEntry {
  eventId: string;
  message: ConsumedMessage;
}

/**
 * The batch being applied: which consumer and transaction runner it belongs to, the time left of
 * its budget, the events that joined it, and the first failure (after which nothing else joins).
 */
export class ConsumeBatch {
  readonly entries: BatchEntry[] = [];
  private failure?: BatchAbortedError;

  constructor(
    readonly consumer: string,
    /** The runner whose transaction the batch is (an event of another runtime cannot join). */
    readonly owner: object,
    private readonly deadline: number,
    private readonly now: () => number = Date.now,
    /** With tenants: the tenant of every event of the batch (its records are in its database). */
    readonly tenant?: string,
  ) {}

  get failed(): BatchAbortedError | undefined {
    return this.failure;
  }

  /** Milliseconds left of the batch's budget (`handlerTimeoutMs` for the whole batch). */
  remainingMs(): number {
    return this.deadline - this.now();
  }

  /** Records the first failure; returns the error to throw (the same for every later call). */
  fail(reason: string, cause?: unknown): BatchAbortedError {
    this.failure ??= new BatchAbortedError(this.consumer, reason, cause);
    return this.failure;
  }
}

const batches = new AsyncLocalStorage<ConsumeBatch>();

/** The batch the current delivery is part of, or undefined (applied on its own). */
export function currentBatch(): ConsumeBatch | undefined {
  return batches.getStore();
}

/** Runs `fn` (the deliveries of the batch) as part of `batch`. */
export function runInBatch<T>(batch: ConsumeBatch, fn: () => T): T {
  return batches.run(batch, fn);
}
