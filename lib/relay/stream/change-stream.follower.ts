import { describeError } from '../../common/errors/describe-error';
import { backoffDelay } from '../../common/backoff';
import type { Reservation } from '../engine/in-flight.budget';
import type { RelayEngine, Offer } from '../engine/relay.engine';
import { ChangeSourceError } from '../ports/change-source';
import type { ChangeCursor, ChangeSource, OutboxChange, ResumeToken } from '../ports/change-source';
import type { OutboxRelayStore } from '../ports/outbox-relay.store';
import { abortableSleep, untilAborted } from '../ports/relay-clock';
import type { RelayClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import type { CollectionDrain } from '../recovery/collection.drain';
import type { OutboxRelayMetrics } from '../relay.metrics';
import type { ResolvedRelayOptions } from '../relay.options';
import type { StreamState } from '../relay.status';
import type { Checkpointer } from './checkpointer';

export interface FollowerDeps {
  changes: ChangeSource;
  outbox: Pick<OutboxRelayStore, 'findPendingState'>;
  engine: RelayEngine;
  drain: CollectionDrain;
  checkpointer: Checkpointer;
  clock: RelayClock;
  random: () => number;
  logger: RelayLogger;
  metrics: OutboxRelayMetrics;
  /** Aborted when the term ends: ends the backoff before a reopen, and a pending opening, at once. */
  stopped: AbortSignal;
  /** A scheduled event was committed, due at `availableAt` (the due reader publishes it). */
  scheduled: (availableAt: Date) => void;
}

/**
 * The fast path: follows the outbox's change stream and offers each batch to the engine. It
 * never stops on its own while its term lasts:
 * - a lost position (oplog rolled over, invalidated, cursor closed) is counted as a recovery,
 *   logged as an error, the stored token cleared, and the collection drained before following
 *   again from the current end;
 * - any other failure (a read of the stream or of the collection) closes the stream and reopens
 *   it from the last safe position, with backoff, for as long as it takes, saying so when the
 *   streak starts and when it ends.
 */
export class ChangeStreamFollower {
  private streamState: StreamState = 'stopped';
  private lastError?: string;
  private cursor?: ChangeCursor;

  constructor(
    private readonly options: Pick<ResolvedRelayOptions, 'batchSize' | 'backoff'>,
    private readonly deps: FollowerDeps,
  ) {}

  get state(): StreamState {
    return this.streamState;
  }

  get error(): string | undefined {
    return this.streamState === 'retrying' ? this.lastError : undefined;
  }

  /** Runs until `active()` turns false (then `stop()` unblocks a pending read). Never rejects. */
  async run(from: ResumeToken | undefined, active: () => boolean): Promise<void> {
    const { checkpointer, logger, metrics } = this.deps;
    let position = from;
    let failures = 0;
    while (active()) {
      try {
        const cursor = await this.opened(this.deps.changes.open(position));
        if (!cursor) break;
        this.cursor = cursor;
        if (!active()) break;
        if (position === undefined) {
          this.streamState = 'draining';
          await this.deps.drain.run(checkpointer.tracker, active);
        }
        await this.follow(this.cursor, active, () => {
          if (failures > 0)
            logger.log(`The change stream is followed again after ${failures} failure(s).`);
          failures = 0;
          this.streamState = 'following';
        });
      } catch (error) {
        if (!active()) break;
        await this.closeCursor();
        if (error instanceof ChangeSourceError && error.kind === 'position-lost') {
          metrics.recoveries++;
          logger.error(
            `The change stream position is lost (${error.message}). Recovering from the outbox collection: every pending ` +
              'event is published from there, then the stream is followed from its current end. Nothing is lost, but ' +
              'check that the oplog window is larger than the longest relay downtime.',
          );
          position = undefined;
          await checkpointer.clear();
          continue;
        }
        failures++;
        this.streamState = 'retrying';
        this.lastError = describeError(error);
        const delay = backoffDelay(failures, this.options.backoff, this.deps.random);
        if (failures === 1 || failures % 10 === 0) {
          logger.warn(
            `The change stream failed (${this.lastError}); reopening from the last safe position in ${delay} ms` +
              `${failures > 1 ? ` (failure ${failures} in a row)` : ''}. The sweep publishes meanwhile.`,
          );
        }
        position = checkpointer.tracker.latest() ?? checkpointer.saved ?? position;
        checkpointer.tracker.reset();
        await abortableSleep(this.deps.clock, delay, this.deps.stopped);
      }
    }
    await this.closeCursor();
    this.streamState = 'stopped';
  }

  /**
   * The stream `opening` gives, or undefined once the term ended first: an opening may wait for
   * long (the cluster-wide stream's hub reopening for another database, a server that does not
   * answer), and no wait of a term outlasts it. A stream opened too late is closed when it comes.
   */
  private async opened(opening: Promise<ChangeCursor>): Promise<ChangeCursor | undefined> {
    const cursor = await untilAborted(opening, this.deps.stopped);
    if (!cursor)
      void opening.then(
        (late) => late.close(),
        () => undefined,
      );
    return cursor;
  }

  /** Unblocks `run` (closes the open stream). */
  async stop(): Promise<void> {
    await this.closeCursor();
  }

  private async closeCursor(): Promise<void> {
    const cursor = this.cursor;
    this.cursor = undefined;
    await cursor?.close();
  }

  private async follow(
    cursor: ChangeCursor,
    active: () => boolean,
    healthy: () => void,
  ): Promise<void> {
    const { engine, checkpointer } = this.deps;
    const tracker = checkpointer.tracker;
    // A read that may wait the idle time holds its reservation meanwhile: once the stream has
    // caught up (a batch came back short), it reserves at most half the events, and lets the
    // catch-up reads (the due reader's, the marks') go first (`reserveIdle`), so an idle stream
    // does not hold them back; a full batch means more may be waiting: a page again.
    let caughtUp = false;
    while (active()) {
      const reservation: Reservation = caughtUp
        ? await engine.budget.reserveIdle(engine.budget.idleSize(this.options.batchSize))
        : await engine.budget.reserve(this.options.batchSize);
      if (!active() || reservation.events === 0) {
        engine.budget.settleReservation(reservation, 0, 0);
        return;
      }
      let batch;
      try {
        batch = await cursor.next(reservation.events);
        healthy();
      } catch (error) {
        engine.budget.settleReservation(reservation, 0, 0);
        throw error;
      }
      const changes = batch.changes;
      caughtUp = changes.length < reservation.events;
      const now = this.takeNow(changes);
      if (now.length === 0) {
        engine.budget.settleReservation(reservation, 0, 0);
        if (changes.length === 0) tracker.observeIdle(batch.position);
        void checkpointer.maybeSave();
        continue;
      }
      await engine.offerRead(reservation, async () => {
        const ids = now.map(({ change }) => change.event._id);
        const states = await this.deps.outbox.findPendingState(ids);
        // The collection is the source of truth: only what is still pending is published, with
        // its current relay fields (attempts, markers, errors); the body comes from the change event.
        const byId = new Map(states.map((state) => [String(state._id), state]));
        const offers: Offer[] = [];
        for (const { change, seq } of now) {
          const state = byId.get(String(change.event._id));
          if (!state) {
            tracker.settle(seq);
            continue;
          }
          offers.push({
            event: { ...change.event, ...state },
            settle: () => {
              tracker.settle(seq);
              void checkpointer.maybeSave();
            },
          });
        }
        return offers;
      });
      void checkpointer.maybeSave();
    }
  }

  /**
   * Tracks `changes` (in stream order) and returns those to publish now, with their sequence
   * numbers. A scheduled event (with `availableAt`, due or not) is never taken from the stream:
   * the due reader publishes it from the collection once due, in its aggregate's order. It is
   * settled at once (nothing of it stays in memory, so the checkpoint passes it) and only its due
   * time is noted.
   */
  private takeNow(changes: readonly OutboxChange[]): Array<{ change: OutboxChange; seq: number }> {
    const tracker = this.deps.checkpointer.tracker;
    const now: Array<{ change: OutboxChange; seq: number }> = [];
    for (const change of changes) {
      const seq = tracker.track(change.token);
      const availableAt = change.event.availableAt;
      if (availableAt === undefined || availableAt === null) {
        now.push({ change, seq });
        continue;
      }
      tracker.settle(seq);
      this.deps.scheduled(new Date(availableAt));
    }
    return now;
  }
}
