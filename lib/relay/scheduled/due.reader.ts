import { describeError } from '../../common/errors/describe-error';
import type { RelayEngine } from '../engine/relay.engine';
import type { OutboxRelayStore } from '../ports/outbox-relay.store';
import type { RelayClock, RelayTimer } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';

export interface DueReaderDeps {
  outbox: Pick<OutboxRelayStore, 'serverTime' | 'findDueAggregates' | 'nextDueAt'>;
  engine: Pick<RelayEngine, 'requestCatchUp' | 'catchUpRoom' | 'isTracked' | 'trackedAggregates'>;
  clock: RelayClock;
  /** False once the term ends. */
  active: () => boolean;
  logger: RelayLogger;
}

export interface DueReaderOptions {
  /** The longest time between two passes, ms (a due time the stream did not bring is found then). */
  recheckMs: number;
  /** Wait after a failed pass, ms. */
  retryMs: number;
}

/** Aggregates asked for at most per pass. */
const PAGE = 1000;
/** Wait before the next pass when the last one filled its page (more are due), ms. */
const MORE_MS = 20;
/** Wait before the next pass when due aggregates were busy in the engine or it had no room, ms. */
const BUSY_MS = 1000;

/**
 * Publishes scheduled events once due: one timer, set for the earliest due time it knows (the
 * collection's `nextDueAt` after each pass, a due time the stream or the sweep noted, whichever
 * comes first; at most `recheckMs` away; none while nothing is scheduled). Each pass reads the server's time, finds the aggregates with an event due by then
 * (by `availableAt`, then `_id`), and has the engine catch each one up from the collection in
 * its aggregate order (`requestCatchUp`), as many as the engine has room for; aggregates the
 * engine already works on are left to it (a later pass looks again). The server time read last
 * is `dueBy`: catch-up reads take scheduled events due by it and stop before any later one, so
 * no event is published before its `availableAt` on the server's clock. It holds nothing of the
 * events not due: after a crash or a hand-over the next owner finds them by the index alone.
 */
export class DueReader {
  private timer?: RelayTimer;
  /** When the timer fires (monotonic ms); Infinity without one. */
  private timerAt = Infinity;
  private running?: Promise<void>;
  private rerun = false;
  private stopped = false;
  private failures = 0;
  /** The last server time read (ms), and the monotonic clock then. */
  private serverAt = 0;
  private serverAtMonotonic = 0;

  constructor(
    private readonly options: DueReaderOptions,
    private readonly deps: DueReaderDeps,
  ) {}

  /** A time already passed on the server: scheduled events due by it may be published. */
  dueBy(): Date {
    return new Date(this.serverAt);
  }

  /** The first pass, at once. */
  start(): void {
    this.fireIn(0);
  }

  /** A scheduled event due at `availableAt` (server time) was committed: a pass by then. */
  noteDue(availableAt: Date): void {
    if (this.serverAt === 0) return; // the first pass is under way and reads the collection
    const elapsed = this.deps.clock.monotonic() - this.serverAtMonotonic;
    this.fireIn(availableAt.getTime() - (this.serverAt + elapsed));
  }

  /** No pass after this one; resolves once a pass under way ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    await this.running;
  }

  /** Sets the timer `ms` from now (at most `recheckMs`), unless it fires sooner; none for Infinity. */
  private fireIn(ms: number): void {
    if (this.stopped || !this.deps.active() || ms === Infinity) return;
    const now = this.deps.clock.monotonic();
    const at = now + Math.max(0, Math.min(ms, this.options.recheckMs));
    if (this.timer && at >= this.timerAt) return;
    this.timer?.cancel();
    this.timerAt = at;
    this.timer = this.deps.clock.setTimeout(() => this.onTimer(), at - now);
  }

  private onTimer(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    if (this.stopped || !this.deps.active()) return;
    if (this.running) {
      this.rerun = true;
      return;
    }
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.rerun) {
        this.rerun = false;
        this.fireIn(0);
      }
    });
  }

  private async pass(): Promise<void> {
    let wait: number;
    try {
      wait = await this.readDue();
      if (this.failures > 0) this.deps.logger.log('Due scheduled events are read again.');
      this.failures = 0;
    } catch (error) {
      if (this.stopped) return;
      if (this.failures++ === 0) {
        this.deps.logger.warn(
          `Could not read the due scheduled events (retrying): ${describeError(error)}`,
        );
      }
      wait = this.options.retryMs;
    }
    this.fireIn(wait);
  }

  /** One pass; returns how long until the next (ms). */
  private async readDue(): Promise<number> {
    const { outbox, engine } = this.deps;
    const serverNow = await outbox.serverTime();
    if (serverNow.getTime() > this.serverAt) {
      this.serverAt = serverNow.getTime();
      this.serverAtMonotonic = this.deps.clock.monotonic();
    }
    const room = engine.catchUpRoom();
    if (room === 0) return BUSY_MS;
    // Ask beyond the room by the aggregates the engine tracks: those may come first, and are skipped.
    const limit = Math.min(PAGE, room + engine.trackedAggregates);
    const due = await outbox.findDueAggregates(serverNow, limit);
    let started = 0;
    let busy = 0;
    for (const aggregate of due) {
      if (this.stopped || !this.deps.active()) return BUSY_MS;
      if (engine.isTracked(aggregate)) busy++;
      else if (engine.requestCatchUp(aggregate)) started++;
      else busy++; // no room left: a later pass
    }
    if (due.length >= limit && started > 0) return MORE_MS;
    // The aggregates handed over are the engine's now; the next pass is for what comes due next,
    // or sooner for the aggregates the engine was busy with (it may not read them again).
    const next = await outbox.nextDueAt(serverNow);
    const wait = next === undefined ? Infinity : next.getTime() - serverNow.getTime();
    return busy > 0 ? Math.min(wait, BUSY_MS) : wait;
  }
}
