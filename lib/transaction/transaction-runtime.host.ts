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
  /** Per connection name, the running modules, latest last (apps may overlap, e.g. in tests). */
  private static readonly runtimes = new Map<string, OutboxRuntime[]>();

  static register(connectionName: string | undefined, runtime: OutboxRuntime): void {
    const key = connectionName ?? DEFAULT_KEY;
    this.runtimes.set(key, [...(this.runtimes.get(key) ?? []), runtime]);
  }

  /** Removes `runtime`; an app closing never disconnects another one still running. */
  static unregister(connectionName: string | undefined, runtime: OutboxRuntime): void {
    const key = connectionName ?? DEFAULT_KEY;
    const left = (this.runtimes.get(key) ?? []).filter((r) => r !== runtime);
    if (left.length > 0) this.runtimes.set(key, left);
    else this.runtimes.delete(key);
  }

  /**
   * The runtime of `connectionName` (the latest registered); without a name, the default
   * connection's, or the one of the only connection registered. Undefined when none fits.
   */
  static resolve(connectionName?: string): OutboxRuntime | undefined {
    if (connectionName !== undefined) return this.runtimes.get(connectionName)?.at(-1);
    const byDefault = this.runtimes.get(DEFAULT_KEY);
    if (byDefault) return byDefault.at(-1);
    if (this.runtimes.size === 1) return this.runtimes.values().next().value?.at(-1);
    return undefined;
  }

  /** Forgets every runtime (tests). */
  static reset(): void {
    this.runtimes.clear();
  }
}
