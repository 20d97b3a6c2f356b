import { describeError } from '../../common/errors/describe-error';
import type { RelayEngine } from '../engine/relay.engine';
import type { OutboxRelayStore } from '../ports/outbox-relay.store';
import type { RelayClock, RelayTimer } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';

export interface DueReaderDeps {
  outbox: Pick<
    OutboxRelayStore,
    'majorityTime' | 'majorityWriteTime' | 'findDueAggregates' | 'nextDueAt'
  >;
  engine: Pick<RelayEngine, 'catchUps'>;
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
 * The least wait before the next pass when the majority time stood still since the last one, ms:
 * on an idle deployment it moves only with the next write (the relay's lease renewal, the
 * primary's periodic no-op), and a due time just after it would otherwise be polled for in a loop.
 */
const STILL_MS = 200;
/**
 * How far ahead of `majorityTime` the earliest due time may be for a pass to ask for the time of
 * a majority write instead (`majorityWriteTime`), ms: mongod's `majorityWriteDate` is in whole
 * seconds and moves only with writes (on an idle deployment with the primary's no-op every 10 s,
 * or the relay's lease renewals), so it may stand that far behind a due time already passed.
 */
const PRECISE_WITHIN_MS = 15_000;

/**
 * Publishes scheduled events once due: one timer, set for the earliest due time it knows (the
 * collection's `nextDueAt` after each pass, a due time the stream or the sweep noted, whichever
 * comes first; at most `recheckMs` away; none while nothing is scheduled). Each pass reads the
 * server's majority time (`majorityTime`: a time on the server's clock by which every write is
 * majority-committed), finds the aggregates with an event due by then (by `availableAt`, then
 * `_id`), and has the engine catch each one up from the collection in its aggregate order
 * (`CatchUpRequests`), as many as the engine has room for; aggregates the engine already works
 * on are left to it (a later pass looks again). The majority time read last is `dueBy`:
 * catch-up reads take scheduled events due by it and leave later ones out, so no event is
 * published before its `availableAt` on the server's clock, and every write committed by then
 * (a cancellation made before the due time) is in what those majority reads see. It holds
 * nothing of the events not due: after a crash or a hand-over the next owner finds them by the
 * index alone.
 */
export class DueReader {
  private timer?: RelayTimer;
  /** When the timer fires (monotonic ms); Infinity without one. */
  private timerAt = Infinity;
  private running?: Promise<void>;
  private rerun = false;
  private stopped = false;
  private failures = 0;
  /** The last majority time read (server clock, ms), and the monotonic clock then. */
  private majorityAt = 0;
  private majorityAtMonotonic = 0;
  /** The earliest due time known (server clock, ms): the last pass's next, or one noted since. */
  private dueAt = Infinity;

  constructor(
    private readonly options: DueReaderOptions,
    private readonly deps: DueReaderDeps,
  ) {}

  /**
   * A time already passed on the server, by which every write is majority-committed: scheduled
   * events due by it may be published (a cancellation committed by then is seen).
   */
  dueBy(): Date {
    return new Date(this.majorityAt);
  }

  /** The first pass, at once. */
  start(): void {
    this.fireIn(0);
  }

  /** A scheduled event due at `availableAt` (server time) was committed: a pass by then. */
  noteDue(availableAt: Date): void {
    if (this.majorityAt === 0) return; // the first pass is under way and reads the collection
    this.dueAt = Math.min(this.dueAt, availableAt.getTime());
    const elapsed = this.deps.clock.monotonic() - this.majorityAtMonotonic;
    this.fireIn(availableAt.getTime() - (this.majorityAt + elapsed));
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
    const { outbox } = this.deps;
    const { catchUps } = this.deps.engine;
    // Not the primary's clock: a write it committed before a due time may still be replicating.
    let majorityNow = await outbox.majorityTime();
    // A due time passed (or about to) that the reported majority time does not reach yet: the
    // time of a majority write of our own reaches it, to the millisecond.
    const behind = this.dueAt - majorityNow.getTime();
    if (behind > 0 && behind <= PRECISE_WITHIN_MS) majorityNow = await outbox.majorityWriteTime();
    const advanced = majorityNow.getTime() !== this.majorityAt;
    // The current primary's time, even when it is behind the last one read (a failover to a
    // primary whose clock is behind): a cancel there checks its own clock, so a catch-up read
    // must not take an event that primary still lets be cancelled.
    if (advanced) {
      this.majorityAt = majorityNow.getTime();
      this.majorityAtMonotonic = this.deps.clock.monotonic();
    }
    // Aggregates whose due events are marked (held back behind a failure or a held topic) come
    // after the others: those waiting for a held topic would lead every page.
    let started = 0;
    let busy = 0;
    for (const marked of [false, true]) {
      // Room for new lanes (`requestCatchUp` also refuses when its queue of reads is full).
      const room = catchUps.room;
      if (room === 0) return BUSY_MS;
      // Ask beyond the room by the aggregates the engine works on: those may come first, and are skipped.
      const limit = Math.min(PAGE, room + catchUps.busy);
      const due = await outbox.findDueAggregates(majorityNow, limit, marked);
      for (const aggregate of due) {
        if (this.stopped || !this.deps.active()) return BUSY_MS;
        if (catchUps.isTracked(aggregate)) busy++;
        else if (catchUps.request(aggregate)) started++;
        else busy++; // no room left: a later pass
      }
      if (due.length >= limit && started > 0) return MORE_MS;
      if (due.length >= limit) break; // the page is full of busy aggregates: a later pass
    }
    // The aggregates handed over are the engine's now; the next pass is for what comes due next,
    // or sooner for the aggregates the engine was busy with (it may not read them again).
    const next = await outbox.nextDueAt(majorityNow);
    this.dueAt = next === undefined ? Infinity : next.getTime();
    let wait = next === undefined ? Infinity : next.getTime() - majorityNow.getTime();
    if (!advanced) wait = Math.max(wait, STILL_MS);
    return busy > 0 ? Math.min(wait, BUSY_MS) : wait;
  }
}
