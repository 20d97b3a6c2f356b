import { sep } from 'node:path';

/** A use of real time or real randomness by the code under test (it must use its ports). */
export interface RealTimeUse {
  api: string;
  /** The first stack frame inside lib/. */
  at: string;
}

const LIB = `${sep}lib${sep}`;

/**
 * While a run goes on, replaces the process's timers, `Date.now`, `performance.now` and
 * `Math.random` with versions that still work but record every call made from lib/: the relay
 * must take time and randomness from its ports only, or the run is not a function of its
 * schedule. Calls from elsewhere (Jest, the simulation itself) are not recorded.
 */
export class RealTimeGuard {
  private readonly uses: RealTimeUse[] = [];
  private restore: Array<() => void> = [];

  install(): void {
    if (this.restore.length > 0) return;
    const target = globalThis as unknown as Record<string, unknown>;
    this.wrap(target, 'setTimeout', 'setTimeout');
    this.wrap(target, 'setInterval', 'setInterval');
    this.wrap(target, 'setImmediate', 'setImmediate');
    this.wrap(Date as unknown as Record<string, unknown>, 'now', 'Date.now');
    this.wrap(Math as unknown as Record<string, unknown>, 'random', 'Math.random');
    this.wrap(performance as unknown as Record<string, unknown>, 'now', 'performance.now');
  }

  uninstall(): void {
    const restore = this.restore;
    this.restore = [];
    restore.reverse().forEach((undo) => undo());
  }

  get recorded(): readonly RealTimeUse[] {
    return this.uses;
  }

  private wrap(owner: Record<string, unknown>, key: string, api: string): void {
    const original = owner[key] as (...args: unknown[]) => unknown;
    const uses = this.uses;
    const replacement = function (this: unknown, ...args: unknown[]): unknown {
      if (uses.length < 20) {
        const frame = new Error().stack
          ?.split('\n')
          .slice(2)
          .find((line) => line.includes(LIB) && !line.includes('node_modules'));
        if (frame) uses.push({ api, at: frame.trim() });
      }
      return original.apply(this, args);
    };
    Object.defineProperty(owner, key, { value: replacement, configurable: true, writable: true });
    this.restore.push(() =>
      Object.defineProperty(owner, key, { value: original, configurable: true, writable: true }),
    );
  }
}
