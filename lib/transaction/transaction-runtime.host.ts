import type { OutboxEventInput } from '../common/envelope';
import type { TransactionRunner } from './transaction.runner';

/** What decorated methods need at call time; registered by `OutboxModule` at bootstrap. */
export interface OutboxRuntime {
  readonly runner: TransactionRunner;
  readonly emitter: { emit(events: OutboxEventInput[]): string[] };
}

const DEFAULT_KEY = '\u0000default';

/**
 * Static bridge between decorators (applied when classes are defined, before any module exists)
 * and the running `OutboxModule`s, keyed by connection name. Filled in `onModuleInit`, emptied in
 * `onModuleDestroy`, so a closed app leaves nothing behind.
 */
export class OutboxRuntimeHost {
  private static readonly runtimes = new Map<string, OutboxRuntime>();

  static register(connectionName: string | undefined, runtime: OutboxRuntime): void {
    this.runtimes.set(connectionName ?? DEFAULT_KEY, runtime);
  }

  /** Removes `runtime` (only if it is still the registered one: apps may overlap in tests). */
  static unregister(connectionName: string | undefined, runtime: OutboxRuntime): void {
    const key = connectionName ?? DEFAULT_KEY;
    if (this.runtimes.get(key) === runtime) this.runtimes.delete(key);
  }

  /**
   * The runtime of `connectionName`; without a name, the default connection's, or the only one
   * registered. Undefined when none fits.
   */
  static resolve(connectionName?: string): OutboxRuntime | undefined {
    if (connectionName !== undefined) return this.runtimes.get(connectionName);
    const byDefault = this.runtimes.get(DEFAULT_KEY);
    if (byDefault) return byDefault;
    if (this.runtimes.size === 1) return this.runtimes.values().next().value;
    return undefined;
  }

  /** Forgets every runtime (tests). */
  static reset(): void {
    this.runtimes.clear();
  }
}
