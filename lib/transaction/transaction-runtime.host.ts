import { RuntimeRegistry } from '../common/runtime.registry';
import type { TransactionRunner } from './transaction.runner';

/**
 * What decorated methods need at call time; registered by the write side's bootstrap (events/).
 * `emitDeclared` emits the events `@EmitsEvent` declared (`outbox:emits_event`), from the
 * method's result and arguments, inside the transaction.
 */
export interface OutboxRuntime {
  readonly runner: TransactionRunner;
  emitDeclared(declared: readonly unknown[], result: unknown, args: unknown[]): void;
}

/**
 * The running write sides, by connection name (`undefined`: the default connection); a decorator
 * naming none is served by the default connection's, else by the only one running.
 */
export const OutboxRuntimeHost = new RuntimeRegistry<string | undefined, OutboxRuntime>();
