import type { SimScheduler } from '../../simulation/core/sim.scheduler';

/**
 * Runs the simulation's scheduler until `promise` settles: a simulated port call is answered
 * by tasks on virtual time (network delays, the server applying it, idle waits of a cursor).
 */
export async function settle<T>(scheduler: SimScheduler, promise: Promise<T>): Promise<T> {
  let settled = false;
  const tracked = promise.finally(() => {
    settled = true;
  });
  // Handled here too: it may reject while the scheduler runs, before the caller awaits it.
  tracked.catch(() => undefined);
  await scheduler.run({ until: Number.POSITIVE_INFINITY, done: () => settled });
  if (!settled) throw new Error('the simulated call was never answered (no task left to run)');
  return tracked;
}

function isInstance(value: unknown): value is object {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto !== Object.prototype && proto !== null && !(value instanceof Date);
}

function drivenValue(scheduler: SimScheduler, value: unknown): unknown {
  if (isInstance(value)) return driven(scheduler, value);
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value);
    if (entries.some(([, inner]) => isInstance(inner))) {
      return Object.fromEntries(
        entries.map(([key, inner]) => [key, drivenValue(scheduler, inner)]),
      );
    }
  }
  return value;
}

/**
 * `port` as plain async code sees it: every method call that returns a promise runs the
 * scheduler until it settles; objects it hands out (a cursor, a partition's ports) are driven
 * the same way. What the contract suites call on the simulated implementations.
 */
export function driven<T extends object>(scheduler: SimScheduler, port: T): T {
  return new Proxy(port, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return drivenValue(scheduler, value);
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (result instanceof Promise) {
          return settle(scheduler, result).then((answer) => drivenValue(scheduler, answer));
        }
        return drivenValue(scheduler, result);
      };
    },
  });
}
