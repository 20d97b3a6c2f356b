/**
 * Bridge between decorators (applied when classes are defined, before any module exists) and the
 * running `OutboxModule`s: per key, the runtimes bound to it, latest last. Modules bind in
 * `onModuleInit` and unbind in `onModuleDestroy`, so a closed app leaves nothing behind and
 * overlapping apps (tests, several connections) each find their own. Keyed by connection name
 * for `@Transactional`/`@EmitsEvent` (`OutboxRuntimeHost`), by the decorated method's settings
 * for `@IdempotentHandler` (`IdempotentHandlerBindings`).
 */
export class RuntimeRegistry<K, T> {
  private readonly runtimes = new Map<K, T[]>();

  bind(key: K, runtime: T): void {
    this.runtimes.set(key, [...(this.runtimes.get(key) ?? []), runtime]);
  }

  /** Removes `runtime`; an app closing never disconnects another one still running. */
  unbind(key: K, runtime: T): void {
    const left = (this.runtimes.get(key) ?? []).filter((r) => r !== runtime);
    if (left.length > 0) this.runtimes.set(key, left);
    else this.runtimes.delete(key);
  }

  /**
   * The latest runtime bound to `key`. For the `undefined` key (a decorator naming no
   * connection) with nothing bound to it, the one of the only key bound. Undefined when none fits.
   */
  resolve(key: K): T | undefined {
    const bound = this.runtimes.get(key);
    if (bound || key !== undefined) return bound?.at(-1);
    if (this.runtimes.size === 1) return this.runtimes.values().next().value?.at(-1);
    return undefined;
  }

  /** Forgets every runtime (tests). */
  reset(): void {
    this.runtimes.clear();
  }
}
