import type { RelayClock, RelayTimer } from '../../../lib/relay/ports/relay-clock';
import type { RelayLoggerFactory } from '../../../lib/relay/ports/relay-logger';
import type { SimScheduler } from '../core/sim.scheduler';
import type { SimTrace } from '../core/sim.trace';
import type { SimHistory } from '../world/sim.history';

/** Virtual time 0 as a wall-clock time (every wall clock of a run is this plus an offset). */
export const SIM_EPOCH_MS = Date.UTC(2030, 0, 1);

/** What a port wrapper does with a call: issue it, and whether the process dies right after. */
export interface PortCallDecision {
  proceed: boolean;
  crashAfter: boolean;
}

/**
 * One relay process: its wall clock (virtual time + a skew that can step), its monotonic clock,
 * stop-the-world pauses and crashes. Everything the process receives (timer firings, answers
 * of its database and Kafka calls) goes through `deliver`: dropped when the process crashed
 * since (a new incarnation knows nothing of the old one's calls), postponed to the end of a
 * pause. What it already sent still lands.
 */
export class SimProcess {
  /** Incarnation number: bumped by every crash and restart. */
  private generation = 0;
  private alive = false;
  private pausedUntil = 0;
  private calls = 0;
  private crashAtCall: { at: number; after: boolean; until: number } | undefined;
  private timerFirings = 0;
  private crashAtTimer: { at: number; after: boolean; until: number } | undefined;
  private monotonicOffset = 0;
  /**
   * Clock rate (local ms per real ms) and the point it applies from: the process's elapsed
   * time is `base.local + (now - base.real) * rate` (1 and 0 without drift). Its wall clock,
   * monotonic clock and timers all run on it; it belongs to the machine, so it outlives crashes.
   */
  private rate = 1;
  private rateBase = { real: 0, local: 0 };
  /** Called when the process dies (crash or crash-at-call), with the reason. */
  onCrash?: (reason: string) => void;

  constructor(
    readonly name: string,
    private readonly scheduler: SimScheduler,
    private readonly history: SimHistory,
    private readonly trace: SimTrace,
    private skewMs: number,
  ) {}

  get isAlive(): boolean {
    return this.alive;
  }

  get incarnation(): number {
    return this.generation;
  }

  get portCalls(): number {
    return this.calls;
  }

  /** Starts a new incarnation (first start or restart). */
  boot(monotonicOffset: number): void {
    this.generation++;
    this.alive = true;
    this.calls = 0;
    this.crashAtCall = undefined;
    this.timerFirings = 0;
    this.crashAtTimer = undefined;
    this.monotonicOffset = monotonicOffset;
  }

  /** The process dies now: nothing it scheduled runs any more, nothing it awaits answers. */
  crash(reason: string): void {
    if (!this.alive) return;
    this.alive = false;
    this.generation++;
    this.pausedUntil = 0;
    this.history.processes.push({
      at: this.scheduler.now,
      node: this.name,
      kind: 'crash',
      detail: reason,
    });
    this.trace.record(this.scheduler.now, `${this.name} crash ${reason}`);
    this.onCrash?.(reason);
  }

  /**
   * Crash at this incarnation's `k`-th port call (before issuing it, or right after), if it
   * comes before virtual time `until` (then the plan is dropped).
   */
  crashAtPortCall(k: number, after: boolean, until = Number.POSITIVE_INFINITY): void {
    this.crashAtCall = { at: k, after, until };
  }

  /**
   * Crash at this incarnation's `k`-th timer firing from now (before its callback runs, or right
   * after its synchronous part ran: what it started never answers), if it comes before `until`.
   */
  crashAtTimerFiring(k: number, after: boolean, until = Number.POSITIVE_INFINITY): void {
    this.crashAtTimer = { at: this.timerFirings + k, after, until };
  }

  /** This process's clocks run at `rate` x real time from now on (1: no drift). */
  setClockRate(rate: number): void {
    this.rateBase = { real: this.scheduler.now, local: this.localElapsed() };
    this.rate = rate;
    this.history.processes.push({
      at: this.scheduler.now,
      node: this.name,
      kind: 'clock-step',
      detail: `rate ${rate}`,
    });
  }

  /** Elapsed ms on this machine's clocks since virtual time 0 (virtual time, unless drifting). */
  private localElapsed(): number {
    return this.rateBase.local + (this.scheduler.now - this.rateBase.real) * this.rate;
  }

  /** Real (virtual) ms until `ms` of this machine's time passed. */
  private realDelay(ms: number): number {
    return this.rate === 1 ? ms : Math.ceil(ms / this.rate);
  }

  /** Runs a timer callback, or crashes at it (`crash-in-timer`). */
  private fireTimer(fn: () => void): void {
    this.timerFirings++;
    const plan = this.crashAtTimer;
    if (plan && this.scheduler.now > plan.until) this.crashAtTimer = undefined;
    else if (plan && this.timerFirings >= plan.at) {
      this.crashAtTimer = undefined;
      this.history.countEffect('crash-in-timer');
      if (!plan.after) {
        this.crash(`at timer firing ${this.timerFirings} (before its callback)`);
        return;
      }
      fn();
      this.crash(`at timer firing ${this.timerFirings} (right after its callback ran)`);
      return;
    }
    fn();
  }

  /** A stop-the-world pause from now until `until`. */
  pause(until: number): void {
    if (!this.alive) return;
    this.pausedUntil = Math.max(this.pausedUntil, until);
    this.history.processes.push({
      at: this.scheduler.now,
      node: this.name,
      kind: 'pause',
      detail: `until ${until}`,
    });
  }

  /** Steps the wall clock (NTP correction, VM migration...). */
  stepClock(deltaMs: number): void {
    this.skewMs += deltaMs;
    this.history.processes.push({
      at: this.scheduler.now,
      node: this.name,
      kind: 'clock-step',
      detail: String(deltaMs),
    });
  }

  /**
   * Counts a port call of the code under test and decides whether it is issued; at the planned
   * call the process crashes (before or right after issuing it).
   */
  portCall(): PortCallDecision {
    if (!this.alive) return { proceed: false, crashAfter: false };
    this.calls++;
    const plan = this.crashAtCall;
    if (plan && this.scheduler.now > plan.until) this.crashAtCall = undefined;
    else if (plan && this.calls >= plan.at) {
      this.crashAtCall = undefined;
      if (!plan.after) {
        this.crash(`at port call ${this.calls} (before issuing it)`);
        return { proceed: false, crashAfter: false };
      }
      return { proceed: true, crashAfter: true };
    }
    return { proceed: true, crashAfter: false };
  }

  /**
   * Runs `fn` in the incarnation `generation` (default: the current one; a call's answer
   * belongs to the incarnation that issued it) at virtual time `at`, or when its pause ends;
   * `onDrop` when that incarnation ended first.
   */
  deliverAt(
    at: number,
    label: string,
    fn: () => void,
    onDrop?: () => void,
    generation = this.generation,
  ): void {
    const attempt = (): void => {
      if (generation !== this.generation || !this.alive) {
        onDrop?.();
        return;
      }
      if (this.scheduler.now < this.pausedUntil) {
        this.scheduler.at(this.pausedUntil, this.name, `${label} (after pause)`, attempt);
        return;
      }
      fn();
    };
    this.scheduler.at(at, this.name, label, attempt);
  }

  /** The clock of the current incarnation. */
  clock(): RelayClock {
    const wall = (): number => SIM_EPOCH_MS + this.localElapsed() + this.skewMs;
    const monotonic = (): number => this.localElapsed() + this.monotonicOffset;
    const setTimer = (fn: () => void, ms: number): RelayTimer => {
      let cancelled = false;
      this.deliverAt(this.scheduler.now + this.realDelay(Math.max(0, ms)), 'timer', () => {
        if (!cancelled) this.fireTimer(fn);
      });
      return { cancel: () => (cancelled = true) };
    };
    const every = (ms: number, fn: () => void): RelayTimer => {
      let cancelled = false;
      const period = Math.max(1, ms);
      const tick = (): void => {
        if (cancelled) return;
        this.deliverAt(this.scheduler.now + this.realDelay(period), 'interval', () => {
          if (cancelled) return;
          tick();
          this.fireTimer(fn);
        });
      };
      tick();
      return { cancel: () => (cancelled = true) };
    };
    return {
      now: wall,
      monotonic,
      setTimeout: setTimer,
      every: (_name, ms, fn) => every(ms, fn),
      sleep: (ms) =>
        new Promise<void>((resolve) => {
          const decision = this.portCall();
          if (!decision.proceed) return;
          setTimer(resolve, ms);
          if (decision.crashAfter) this.crash('right after a sleep() call');
        }),
    };
  }

  /** Loggers that record into the history (and the trace) instead of printing. */
  loggers(): RelayLoggerFactory {
    return (context) => {
      const write =
        (level: 'log' | 'warn' | 'error' | 'debug') =>
        (message: string): void => {
          this.history.logs.push({
            at: this.scheduler.now,
            node: this.name,
            context,
            level,
            message,
          });
          this.trace.record(this.scheduler.now, `${this.name} ${level} ${context}: ${message}`);
        };
      return {
        log: write('log'),
        warn: write('warn'),
        error: write('error'),
        debug: write('debug'),
      };
    };
  }
}
