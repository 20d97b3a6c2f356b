/** A timer started through a `RelayClock`. */
export interface RelayTimer {
  cancel(): void;
}

/**
 * Time as the relay sees it. Production uses the process clocks (`systemClock`); the simulation
 * runs the same relay code on virtual time, with skewed wall clocks and stop-the-world pauses.
 *
 * The relay never compares `now()` with a time written by another machine (lease expiry is
 * the database server's clock, see `LeaseKeeper`); `now()` only stamps what it writes
 * (`publishedAt`, `nextAttemptAt`, dead letters) and drives its own backoff.
 */
export interface RelayClock {
  /** This process's wall clock, ms since the epoch. */
  now(): number;
  /** A clock for elapsed time only (never set back, unaffected by wall-clock changes), ms. */
  monotonic(): number;
  /** Calls `fn` once after `ms` (monotonic). */
  setTimeout(fn: () => void, ms: number): RelayTimer;
  /** Resolves after `ms`. */
  sleep(ms: number): Promise<void>;
  /**
   * Calls `fn` every `ms` until cancelled. `name` identifies the job (the Nest integration
   * registers it in @nestjs/schedule's `SchedulerRegistry` under that name when available).
   */
  every(name: string, ms: number, fn: () => void): RelayTimer;
}

/** The process clocks: `Date.now()`, `performance.now()`, unref'd timers (they never keep the process alive). */
export const systemClock: RelayClock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout(fn, ms) {
    const handle = setTimeout(fn, Math.max(0, ms));
    handle.unref?.();
    return { cancel: () => clearTimeout(handle) };
  },
  sleep: (ms) => new Promise((resolve) => systemClock.setTimeout(resolve, ms)),
  every(_name, ms, fn) {
    const handle = setInterval(fn, Math.max(1, ms));
    handle.unref?.();
    return { cancel: () => clearInterval(handle) };
  },
};

/** A periodic job whose `stop()` cancels it and waits for the run under way. */
export interface RelayJob {
  stop(): Promise<void>;
}

/**
 * Runs `job` every `ms` (`clock.every`), never two runs at once: a tick while a run is under way
 * is skipped.
 */
export function everyInTurn(
  clock: RelayClock,
  name: string,
  ms: number,
  job: () => Promise<unknown>,
): RelayJob {
  let running: Promise<unknown> | undefined;
  const timer = clock.every(name, ms, () => {
    running ??= job().finally(() => (running = undefined));
  });
  return {
    stop: async () => {
      timer.cancel();
      await running?.catch(() => undefined);
    },
  };
}

/**
 * Resolves after `ms` on `clock`, or as soon as `signal` is aborted (at once when it already
 * is): every wait of a relay term ends when the term ends.
 */
export function abortableSleep(clock: RelayClock, ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      timer.cancel();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * What `promise` gives, or undefined as soon as `signal` is aborted (at once when it already is):
 * a wait that may never end (a stream's opening) does not outlast its term. `promise` is left to
 * settle on its own; the caller disposes of what it gives late.
 */
export async function untilAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal,
): Promise<T | undefined> {
  if (signal.aborted) return undefined;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort as () => void);
  }
}
