import type { OutboxEventInput } from '../common/envelope';
import { RuntimeRegistry } from '../common/runtime.registry';
import type { TransactionRunner } from './transaction.runner';

/** What decorated methods need at call time; registered by `OutboxModule` at bootstrap. */
export interface OutboxRuntime {
  readonly runner: TransactionRunner;
  readonly emitter: { emit(events: OutboxEventInput[]): string[] };
}

/**
 * The running write sides, by connection name (`undefined`: the default connection); a decorator
 * naming none is served by the default connection's, else by the only one running.
 */
export const OutboxRuntimeHost = new RuntimeRegistry<string | undefined, OutboxRuntime>();
