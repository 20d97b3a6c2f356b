const DEFAULT_KEY = '\u0000default';

/**
 * Bridge between decorators (applied when classes are defined, before any module exists) and the
 * running `OutboxModule`s, keyed by connection name. Filled in `onModuleInit`, emptied in
 * `onModuleDestroy`, so a closed app leaves nothing behind and overlapping apps (tests, several
 * connections) each find their own.
 */
export class RuntimeRegistry<T> {
  /** Per connection name, the running modules, latest last. */
  private readonly runtimes = new Map<string, T[]>();

  register(connectionName: string | undefined, runtime: T): void {
    const key = connectionName ?? DEFAULT_KEY;
    this.runtimes.set(key, [...(this.runtimes.get(key) ?? []), runtime]);
  }

  /** Removes `runtime`; an app closing never disconnects another one still running. */
  unregister(connectionName: string | undefined, runtime: T): void {
    const key = connectionName ?? DEFAULT_KEY;
    const left = (this.runtimes.get(key) ?? []).filter((r) => r !== runtime);
    if (left.length > 0) this.runtimes.set(key, left);
    else this.runtimes.delete(key);
  }

  /**
   * The runtime of `connectionName` (the latest registered); without a name, the default
   * connection's, or the one of the only connection registered. Undefined when none fits.
   */
  resolve(connectionName?: string): T | undefined {
    if (connectionName !== undefined) return this.runtimes.get(connectionName)?.at(-1);
    const byDefault = this.runtimes.get(DEFAULT_KEY);
    if (byDefault) return byDefault.at(-1);
    if (this.runtimes.size === 1) return this.runtimes.values().next().value?.at(-1);
    return undefined;
  }

  /** Forgets every runtime (tests). */
  reset(): void {
    this.runtimes.clear();
  }
}
