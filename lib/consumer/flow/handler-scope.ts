import { AsyncLocalStorage } from 'node:async_hooks';
import type { ClientSession } from 'mongoose';
import { OutsideIdempotentHandlerError } from '../consumer.errors';

/**
 * The attempt an `@IdempotentHandler` method (and everything it awaits) is running in.
 *
 * What joins the handler's transaction by itself: Mongoose model calls (queries, `save()`,
 * `create`, `insertMany`, `bulkWrite`, aggregates: Mongoose's AsyncLocalStorage), `@Transactional()`
 * methods and `TransactionRunner.run()` (they join), and `OutboxEmitter.emit()` / `@EmitsEvent`
 * (the events commit with it). What does not: the native driver (`connection.collection(...)`,
 * `connection.db`, `Model.collection`), which takes the session only when given one, as
 * `{ session }`; a transaction started with `connection.transaction()` or `startSession()`;
 * other connections.
 */
export interface IdempotentHandlerScope {
  /** The consumer name (the dedupe key is `(consumer, eventId)`). */
  readonly consumer: string;
  readonly eventId: string;
  /** 1 for the first attempt of a delivery; after a failure, the failures counted for the event so far (earlier deliveries included) + 1. */
  readonly attempt: number;
  /**
   * With the `tenants` option: the event's tenant (its `ce_tenant` header). The processed record
   * is in that tenant's database, and the handler runs inside `runInTenant(tenant, ...)`, so the
   * events it emits go to that tenant's outbox. Undefined without tenants.
   */
  readonly tenant?: string;
  /**
   * The session of the handler's transaction: pass it to native driver calls
   * (`collection.insertOne(doc, { session })`) so they commit or abort with the handler. Reading
   * it after the attempt timed out throws the `HandlerTimeoutError`.
   */
  readonly session: ClientSession;
  /**
   * Aborted when the attempt exceeds `handlerTimeoutMs` (reason: the `HandlerTimeoutError`). Pass
   * it to work that does not go through the session (`fetch(url, { signal })`), or check it.
   */
  readonly signal: AbortSignal;
}

const scopes = new AsyncLocalStorage<IdempotentHandlerScope>();

/** The running attempt; throws `OutsideIdempotentHandlerError` outside one. */
export function currentHandlerScope(): IdempotentHandlerScope {
  const scope = scopes.getStore();
  if (!scope) throw new OutsideIdempotentHandlerError();
  return scope;
}

/** Runs `fn` as the attempt described by `fields` (the session getter checks the signal). */
export function runInHandlerScope<T>(
  fields: Omit<IdempotentHandlerScope, 'session'> & { session: ClientSession | undefined },
  fn: () => T,
): T {
  const { session, ...rest } = fields;
  const { signal } = rest;
  const scope: IdempotentHandlerScope = {
    ...rest,
    get session(): ClientSession {
      if (signal.aborted) throw signal.reason;
      if (!session) throw new OutsideIdempotentHandlerError();
      return session;
    },
  };
  return scopes.run(scope, fn);
}
