import { isObservable, lastValueFrom } from 'rxjs';
import { runFenced } from '../../common/work-fence';
import {
  isDuplicateKeyError,
  type ConsumerTransactionRunner,
  type ProcessedEventStore,
} from '../consume.ports';
import { HandlerTimeoutError } from '../consumer.errors';
import { runInTenant } from '../../tenants/outbox-tenant.context';
import { runInHandlerScope } from './handler-scope';

export type AttemptResult =
  | { kind: 'applied'; result: unknown; durationMs: number }
  | { kind: 'duplicate' }
  | { kind: 'failed'; error: unknown; timedOut: boolean; durationMs?: number };

export interface AttemptInput {
  handler: string;
  consumer: string;
  eventId: string;
  /** 1 for the first attempt at the event (earlier deliveries counted). */
  attempt: number;
  /** With tenants: the event's tenant (the handler runs in `runInTenant(tenant, ...)`). */
  tenant?: string;
  timeoutMs: number;
  run: () => unknown;
}

/** Signals, from inside the transaction, that the processed record already exists. */
class AlreadyProcessed extends Error {}

/**
 * One attempt at an event, in one transaction: insert `(consumer, eventId)` (a duplicate key
 * means "already applied": the transaction is aborted), then run the handler, its writes joining
 * the same transaction.
 *
 * The handler runs inside the attempt's scope (`currentHandlerScope()`) and fence, and is raced
 * against `timeoutMs` inside the transaction body: on expiry the body rejects, so the transaction
 * is aborted and its session ended right away, while the handler may still be running. What
 * that late handler can still do: writes through the aborted session fail (the session is
 * ended), `@Transactional()`/`TransactionRunner.run()` refuse to start a new transaction (the
 * fence), `currentHandlerScope().session` throws; anything outside the session (the native driver
 * without `{ session }`, `connection.transaction()`, HTTP calls) is not stopped: the handler is
 * told through `currentHandlerScope().signal`.
 */
export async function runAttempt(
  input: AttemptInput,
  runner: ConsumerTransactionRunner,
  processed: Pick<ProcessedEventStore, 'insert'>,
): Promise<AttemptResult> {
  const controller = new AbortController();
  let durationMs: number | undefined;
  try {
    const result = await runner.run(async () => {
      try {
        await processed.insert(input.consumer, input.eventId);
      } catch (error) {
        if (isDuplicateKeyError(error)) throw new AlreadyProcessed();
        throw error;
      }
      const session = runner.currentSession();
      const started = Date.now();
      try {
        return await withTimeout(
          () =>
            runFenced(controller.signal, () =>
              runInHandlerScope(
                {
                  consumer: input.consumer,
                  eventId: input.eventId,
                  attempt: input.attempt,
                  ...(input.tenant !== undefined ? { tenant: input.tenant } : {}),
                  signal: controller.signal,
                  session,
                },
                () =>
                  input.tenant !== undefined
                    ? runInTenant(input.tenant, () => settle(input.run))
                    : settle(input.run),
              ),
            ),
          input.timeoutMs,
          controller,
          () => new HandlerTimeoutError(input.handler, input.eventId, input.timeoutMs),
        );
      } finally {
        durationMs = Date.now() - started;
      }
    });
    return { kind: 'applied', result, durationMs: durationMs ?? 0 };
  } catch (error) {
    if (error instanceof AlreadyProcessed) return { kind: 'duplicate' };
    return {
      kind: 'failed',
      error,
      timedOut: error instanceof HandlerTimeoutError,
      ...(durationMs !== undefined ? { durationMs } : {}),
    };
  }
}

/** Runs `work`; rejects with `timeoutError()` (and aborts `controller`) after `ms`. */
function withTimeout<T>(
  work: () => Promise<T>,
  ms: number,
  controller: AbortController,
  timeoutError: () => Error,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = timeoutError();
      controller.abort(error);
      reject(error);
    }, ms);
  });
  return Promise.race([work(), expired]).finally(() => clearTimeout(timer));
}

/** Calls the handler and awaits its result: a promise, an observable (its last value), or a plain value. */
async function settle(run: () => unknown): Promise<unknown> {
  const value = await run();
  return isObservable(value) ? lastValueFrom(value, { defaultValue: undefined }) : value;
}
