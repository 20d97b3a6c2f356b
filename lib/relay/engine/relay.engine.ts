import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { asError, describeError } from '../../common/errors/describe-error';
import type { OutboxPublisher, PublishOutcome } from '../../publisher/outbox-publisher.interface';
import type { AggregateRef, DeadLetterRecord, OutboxRelayStore } from '../ports/outbox-relay.store';
import type { RelayClock, RelayTimer } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import type { OutboxRelayMetrics } from '../relay.metrics';
import type { ResolvedRelayOptions } from '../relay.options';
import type { RelayWrites } from '../term/fenced.writes';
import { aggregateKey } from './aggregate.lane';
import type { AggregateLane, LaneItem, Settle } from './aggregate.lane';
import { AckedEvents } from './acked-events';
import type { ReadTicket } from './acked-events';
import { DestinationHolds } from './destination.holds';
import { DurableWrites } from './durable.writes';
import { eventSize } from './event-size';
import { HeldBackMarker } from './held-back.marker';
import { InFlightBudget } from './in-flight.budget';
import type { Reservation } from './in-flight.budget';
import { LaneTable } from './lane.table';
import { MarksRescan } from './marks.rescan';
import { judgeLane } from './outcome.judge';
import type { LaneJudgement } from './outcome.judge';
import { RetrySchedule } from './retry.schedule';

export interface RelayEngineOptions {
  batchSize: number;
  maxBatchBytes: number;
  maxInFlight: number;
  maxInFlightBytes: number;
  maxAttempts: number;
  backoff: ResolvedRelayOptions['backoff'];
  /** Publish calls in flight at once (never two with events of the same aggregate). */
  publishConcurrency: number;
  /** Catch-up pages read at once. Default 4. */
  readConcurrency?: number;
}

export interface RelayEngineDeps {
  outbox: Pick<OutboxRelayStore, 'findPendingOfAggregate' | 'findRetryingAggregates'>;
  writes: RelayWrites;
  publisher: OutboxPublisher;
  clock: RelayClock;
  /** The database server's time as this process estimates it (stamps and retry times), ms. */
  now: () => number;
  /** False stops publishing (the lease ran out, or the term ends). */
  canPublish: () => boolean;
  /** Whether the lease is still valid (default: always); `close` abandons publishes at once when not. */
  leaseValid?: () => boolean;
  random: () => number;
  logger: RelayLogger;
  /** Speaks of destination holds (`RelayDestinations`). */
  holdsLogger: RelayLogger;
  metrics: OutboxRelayMetrics;
  /**
   * The in-memory bound to use instead of one of its own (`maxInFlight`, `maxInFlightBytes`):
   * a partitioned relay shares one budget among its partitions' engines.
   */
  budget?: InFlightBudget;
}

/** An event offered by the change stream or the drain, and what to call once its fate is durable. */
export interface Offer {
  event: OutboxEventRecord;
  settle: Settle;
}

/** Catch-up requests from the sweep that may wait at once; more are refused (the sweep comes back). */
const MAX_QUEUED_CATCHUPS = 1000;

/**
 * The relay's core, free of MongoDB and Kafka: per-aggregate lanes (commit order; a failing
 * event holds back only its own aggregate), batching by count and bytes, retries with backoff,
 * destination holds, dead letters, broker-outage pauses, and the in-memory bound.
 *
 * Checkpoint safety: an offered event's `settle` runs only once its fate is durable - the broker
 * acknowledged it, it is marked dead, or it is left pending with a marker (`nextAttemptAt`) that
 * makes any later leader read its aggregate from the collection before publishing newer events
 * of it. So the resume token may pass it, and per-aggregate order survives a crash.
 */
export class RelayEngine {
  readonly budget: InFlightBudget;
  private readonly lanes: LaneTable;
  private ready: AggregateLane[] = [];
  private readQueue: AggregateLane[] = [];
  private reads = 0;
  private calls = 0;
  private readonly retries = new RetrySchedule<string>();
  private readonly holds: DestinationHolds;
  private readonly durable: DurableWrites;
  private readonly marker: HeldBackMarker;
  private readonly rescans: MarksRescan;
  private readonly tasks = new Set<Promise<void>>();
  /** Acknowledged by the broker, their published mark maybe not visible yet: not to be published again. */
  private readonly acked = new AckedEvents();
  private timer?: RelayTimer;
  private timerAt = Infinity;
  private pausedUntil = 0;
  private outageFailures = 0;
  private closed = false;
  /** Aborted when the engine gives up on its publish calls (see `close`). */
  private readonly abandon = new AbortController();
  private readonly readConcurrency: number;

  constructor(
    private readonly options: RelayEngineOptions,
    private readonly deps: RelayEngineDeps,
  ) {
    this.budget = deps.budget ?? new InFlightBudget(options.maxInFlight, options.maxInFlightBytes);
    this.lanes = new LaneTable(() => this.budget.maxEvents);
    this.rescans = new MarksRescan({
      outbox: deps.outbox,
      lanes: this.lanes,
      now: deps.now,
      holding: () => this.holds.size > 0,
      holdUntil: (ref, retryAt) => this.holdUntil(ref, retryAt),
      closed: () => this.closed,
      track: (task) => this.track(task),
      logger: deps.logger,
    });
    this.holds = new DestinationHolds(options.backoff, deps.random, deps.holdsLogger);
    this.durable = new DurableWrites(
      deps.clock,
      options.backoff,
      deps.random,
      deps.logger,
      this.abandon.signal,
    );
    this.marker = new HeldBackMarker({
      durable: this.durable,
      writes: deps.writes,
      track: (task) => this.track(task),
      markerWrite: (write) => this.rescans.markerWrite(write),
    });
    this.readConcurrency = options.readConcurrency ?? 4;
  }

  /** Aggregates tracked (publishing, blocked, catching up). */
  get trackedAggregates(): number {
    return this.lanes.size;
  }

  isTracked(ref: AggregateRef): boolean {
    return this.lanes.has(aggregateKey(ref));
  }

  status() {
    return {
      inFlight: { events: this.budget.events, bytes: this.budget.bytes },
      trackedAggregates: this.lanes.size,
      heldDestinations: this.holds.snapshot(),
      brokerPausedUntil:
        this.pausedUntil > this.deps.clock.monotonic()
          ? this.deps.clock.now() + (this.pausedUntil - this.deps.clock.monotonic())
          : undefined,
    };
  }

  /**
   * Takes events read under `reservation` (change stream or drain; commit order per aggregate),
   * by the read of `read` (see `openRead`). Events of an aggregate that waits or catches up are
   * left pending with a marker.
   */
  offer(offers: readonly Offer[], reservation: Reservation, read?: ReadTicket): void {
    let queued = 0;
    let bytes = 0;
    for (const { event, settle } of offers) {
      if (this.closed) break;
      const id = String(event._id);
      if (this.acked.has(id, read)) {
        settle(); // acknowledged already; the read did not see its mark yet
        continue;
      }
      const key = aggregateKey(event);
      const tracked = this.lanes.get(key);
      if (!tracked && (event.nextAttemptAt || this.lanes.untracked.mayHave(key))) {
        this.offerUntracked(event, settle);
        continue;
      }
      const lane = tracked ?? this.lanes.laneOf(event);
      const existing = lane.ids.get(id);
      if (existing) {
        existing.settles.push(settle);
        continue;
      }
      if (lane.mode !== 'live') {
        if (lane.mode === 'catchup') lane.more = true;
        this.marker.holdBack(event, settle);
        continue;
      }
      if (event.nextAttemptAt) {
        // Marked by an earlier term: read its aggregate from the collection, in order.
        settle();
        const retryAt = new Date(event.nextAttemptAt).getTime();
        if (retryAt > this.deps.now()) this.blockUntil(lane, retryAt);
        else this.startCatchUp(lane);
        continue;
      }
      const item: LaneItem = { event, id, bytes: this.sizeOf(event), settles: [settle] };
      lane.queue.push(item);
      lane.ids.set(id, item);
      queued++;
      bytes += item.bytes;
      this.markReady(lane);
    }
    this.budget.settleReservation(reservation, queued, bytes);
    this.pump();
  }

  /**
   * Call before reading events from the collection that will be offered, and `closeRead` once
   * they are: an event whose published mark lands meanwhile is not taken as pending.
   */
  openRead(): ReadTicket {
    return this.acked.openRead();
  }

  closeRead(read: ReadTicket): void {
    this.acked.closeRead(read);
  }

  /**
   * An aggregate known to have marked events (read at start-up and by `rescanMarks`): it waits
   * until `retryAt`, then is read from the collection; noted as untracked when there is no room.
   */
  holdUntil(ref: AggregateRef, retryAt: Date): void {
    if (this.closed) return;
    const lane = this.lanes.admit(ref, true);
    if (lane?.mode === 'live' && lane.queue.length === 0 && !lane.busy) {
      this.blockUntil(lane, retryAt.getTime());
    }
  }

  /** Reads the aggregate's pending events from the collection (sweep). False when already tracked. */
  requestCatchUp(ref: AggregateRef): boolean {
    if (this.closed || this.readQueue.length >= MAX_QUEUED_CATCHUPS) return false;
    if (this.lanes.has(aggregateKey(ref))) return false;
    const lane = this.lanes.admit(ref, false);
    if (!lane) return false;
    this.startCatchUp(lane);
    return true;
  }

  /** Reads again the aggregates with marks it does not track (see `MarksRescan`). Called by the sweep. */
  rescanMarks(): void {
    this.rescans.start();
  }

  /** Resolves when nothing is queued, read or published (blocked aggregates may remain). */
  async idle(): Promise<void> {
    while (!this.closed && (this.tasks.size > 0 || this.budget.events > 0)) {
      await Promise.race([...this.tasks, this.deps.clock.sleep(20)]);
    }
  }

  /**
   * Stops taking work and waits up to `timeoutMs` for what is under way: publish calls finish
   * and what the broker answered is settled (published marks, failure records, dead letters,
   * markers of the events left behind, each retried while the lease lasts); what is queued
   * stays pending. Returns whether everything finished. Work still under way then is
   * abandoned: the publisher sends nothing more for it (no retry, no fallback send), since
   * another instance may take over its aggregates. When the lease is no longer valid
   * (`leaseValid`), it is abandoned at once.
   */
  async close(timeoutMs: number): Promise<boolean> {
    if (this.closed) return true;
    this.closed = true;
    this.timer?.cancel();
    this.budget.close();
    this.lanes.stopWaiting();
    if (this.deps.leaseValid && !this.deps.leaseValid()) this.abandon.abort();
    let timer: RelayTimer | undefined;
    const finished = await Promise.race([
      Promise.allSettled([...this.tasks]).then(() => true),
      new Promise<boolean>((resolve) => {
        timer = this.deps.clock.setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    timer?.cancel();
    if (!finished) this.abandon.abort();
    this.lanes.clear();
    this.ready = [];
    this.readQueue = [];
    this.retries.clear();
    return finished;
  }

  // ---------------------------------------------------------------- lanes

  /**
   * An event of an aggregate without a lane that has (or may have) marked events: left pending
   * with a marker, and the aggregate read from the collection in order (now, when a lane fits;
   * else by the sweep or the rescan of the marks).
   */
  private offerUntracked(event: OutboxEventRecord, settle: Settle): void {
    if (event.nextAttemptAt) settle();
    else {
      this.lanes.untracked.add(aggregateKey(event));
      this.marker.holdBack(event, settle);
    }
    const lane = this.lanes.admit(event, true);
    if (!lane) return;
    const retryAt = event.nextAttemptAt ? new Date(event.nextAttemptAt).getTime() : 0;
    if (retryAt > this.deps.now()) this.blockUntil(lane, retryAt);
    else this.startCatchUp(lane);
  }

  /** A lane that waits leaves memory beyond the bound (see `LaneTable`); timers and holds forget it. */
  private parkIfOver(lane: AggregateLane): void {
    if (!this.lanes.park(lane)) return;
    this.retries.delete(lane.key);
    if (this.holds.park(lane.key)) this.armTimer();
  }

  private sizeOf(event: OutboxEventRecord): number {
    return this.deps.publisher.sizeOf?.(event) ?? eventSize(event);
  }

  private markReady(lane: AggregateLane): void {
    if (!lane.inReady && !lane.busy && lane.mode !== 'blocked' && lane.queue.length > 0) {
      lane.inReady = true;
      this.ready.push(lane);
    }
  }

  private blockUntil(lane: AggregateLane, retryAt: number): void {
    lane.mode = 'blocked';
    lane.heldBy = undefined;
    lane.retryAt = retryAt;
    this.retries.set(lane.key, retryAt);
    this.armTimer();
  }

  private startCatchUp(lane: AggregateLane): void {
    lane.mode = 'catchup';
    lane.heldBy = undefined;
    lane.more = true;
    this.retries.delete(lane.key);
    this.continueLane(lane);
  }

  /** Next step of a lane whose publish call, read or dead-letter step just ended. */
  private continueLane(lane: AggregateLane): void {
    if (this.closed || lane.busy || lane.mode === 'blocked') return;
    if (lane.queue.length > 0) {
      this.markReady(lane);
      return;
    }
    if (lane.mode === 'catchup') {
      if (lane.reading) return;
      if (lane.more) {
        lane.reading = true;
        this.readQueue.push(lane);
        this.pumpReads();
        return;
      }
      lane.mode = 'live';
      if (this.holds.probeEnded(lane.key)) this.armTimer();
    }
    if (lane.ids.size === 0) this.lanes.delete(lane.key);
  }

  /** Removes the lane's queued events from memory; they stay pending, marked. */
  private dropQueue(lane: AggregateLane, items: readonly LaneItem[]): void {
    for (const item of [...items, ...lane.queue]) {
      lane.ids.delete(item.id);
      this.budget.release(1, item.bytes);
      const settles = item.settles;
      this.marker.holdBack(item.event, () => settles.forEach((settle) => settle()));
    }
    lane.queue = [];
  }

  private finish(lane: AggregateLane, item: LaneItem): void {
    lane.ids.delete(item.id);
    this.budget.release(1, item.bytes);
  }

  // ---------------------------------------------------------------- catch-up reads

  private pumpReads(): void {
    while (!this.closed && this.reads < this.readConcurrency && this.readQueue.length > 0) {
      const lane = this.readQueue.shift() as AggregateLane;
      this.reads++;
      this.track(
        this.readPage(lane).finally(() => {
          this.reads--;
          this.pumpReads();
        }),
      );
    }
  }

  private async readPage(lane: AggregateLane): Promise<void> {
    const reservation = await this.budget.reserve(this.options.batchSize);
    if (this.closed || lane.mode !== 'catchup' || reservation.events === 0) {
      this.budget.settleReservation(reservation, 0, 0);
      lane.reading = false;
      return;
    }
    lane.more = false;
    const read = this.acked.openRead();
    try {
      await this.readPageWith(lane, reservation, read);
    } finally {
      this.acked.closeRead(read);
    }
  }

  private async readPageWith(
    lane: AggregateLane,
    reservation: Reservation,
    read: ReadTicket,
  ): Promise<void> {
    let events: OutboxEventRecord[];
    try {
      events = await this.deps.outbox.findPendingOfAggregate(lane.ref, reservation.events);
    } catch (error) {
      this.budget.settleReservation(reservation, 0, 0);
      lane.reading = false;
      if (this.closed) return;
      this.deps.logger.warn(
        `Could not read pending events of ${lane.ref.aggregateType}/${lane.ref.aggregateId} (retrying): ${describeError(error)}`,
      );
      this.blockUntil(lane, this.deps.now() + this.options.backoff.initialMs);
      this.parkIfOver(lane);
      return;
    }
    lane.reading = false;
    if (this.closed || lane.mode !== 'catchup') {
      this.budget.settleReservation(reservation, 0, 0);
      return;
    }
    const now = this.deps.now();
    let queued = 0;
    let bytes = 0;
    let blockAt: number | undefined;
    const skipped: string[] = [];
    for (const event of events) {
      const id = String(event._id);
      if (this.acked.has(id, read)) {
        skipped.push(id);
        continue;
      }
      if (lane.ids.has(id)) continue;
      const retryAt = event.nextAttemptAt ? new Date(event.nextAttemptAt).getTime() : 0;
      if (retryAt > now) {
        // Waits for its retry: publish what comes before it, then read again (and wait).
        if (lane.queue.length === 0 && !lane.busy) blockAt = retryAt;
        else lane.more = true;
        break;
      }
      const item: LaneItem = { event, id, bytes: this.sizeOf(event), settles: [] };
      lane.queue.push(item);
      lane.ids.set(id, item);
      queued++;
      bytes += item.bytes;
    }
    if (events.length >= reservation.events) lane.more = true;
    this.budget.settleReservation(reservation, queued, bytes);
    if (blockAt !== undefined) {
      this.blockUntil(lane, blockAt);
      this.parkIfOver(lane);
    } else if (queued === 0 && skipped.length > 0 && lane.queue.length === 0) {
      // Only events whose published mark is on its way: read again once it landed.
      lane.reading = true;
      await Promise.allSettled(this.acked.pendingMarks(skipped));
      lane.reading = false;
      this.continueLane(lane);
    } else this.continueLane(lane);
    this.pump();
  }

  // ---------------------------------------------------------------- timers

  private armTimer(): void {
    if (this.closed) return;
    const monotonicNow = this.deps.clock.monotonic();
    const serverNow = this.deps.now();
    const candidates = [this.retries.next(), this.holds.nextRetryAt()]
      .filter((at): at is number => at !== undefined)
      .map((at) => at - serverNow);
    if (this.pausedUntil > monotonicNow) candidates.push(this.pausedUntil - monotonicNow);
    if (candidates.length === 0) return;
    const at = monotonicNow + Math.max(0, Math.min(...candidates));
    if (this.timer && at >= this.timerAt) return;
    this.timer?.cancel();
    this.timerAt = at;
    this.timer = this.deps.clock.setTimeout(() => this.onTimer(), at - monotonicNow);
  }

  private onTimer(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    if (this.closed) return;
    const now = this.deps.now();
    for (const key of this.retries.takeDue(now)) {
      const lane = this.lanes.get(key);
      if (lane?.mode === 'blocked' && lane.heldBy === undefined) this.startCatchUp(lane);
    }
    const held = this.holds.size;
    for (const probe of this.holds.dueProbes(now)) {
      const lane = this.lanes.get(probe.lane);
      if (lane?.mode === 'blocked' && lane.heldBy !== undefined) this.startCatchUp(lane);
      else this.holds.probeEnded(probe.lane); // the timer is armed below
    }
    if (this.holds.size < held) this.rescanMarks(); // a hold of parked aggregates only
    this.pump();
    this.armTimer();
  }

  // ---------------------------------------------------------------- publishing

  private track(task: Promise<void>): void {
    const tracked = task
      .catch((error: unknown) => {
        this.deps.logger.error(`Relay task failed unexpectedly: ${describeError(error)}`);
      })
      .finally(() => this.tasks.delete(tracked));
    this.tasks.add(tracked);
  }

  private pump(): void {
    if (this.closed) return;
    if (this.deps.clock.monotonic() < this.pausedUntil) {
      this.armTimer();
      return;
    }
    if (!this.deps.canPublish()) return;
    while (this.calls < this.options.publishConcurrency && this.ready.length > 0) {
      const entries = this.takeBatch();
      if (entries.length === 0) break;
      this.calls++;
      this.track(
        this.runBatch(entries).finally(() => {
          this.calls--;
          this.pump();
        }),
      );
    }
  }

  /** Up to `batchSize` events and `maxBatchBytes` (one event may exceed it alone), lane by lane. */
  private takeBatch(): Array<{ lane: AggregateLane; items: LaneItem[] }> {
    const entries: Array<{ lane: AggregateLane; items: LaneItem[] }> = [];
    let count = 0;
    let bytes = 0;
    const destinationsOf = this.deps.publisher.destinationsOf?.bind(this.deps.publisher);
    while (this.ready.length > 0 && count < this.options.batchSize) {
      const lane = this.ready[0];
      if (lane.busy || lane.mode === 'blocked' || lane.queue.length === 0) {
        this.ready.shift();
        lane.inReady = false;
        continue;
      }
      const items: LaneItem[] = [];
      let full = false;
      while (lane.queue.length > 0 && count < this.options.batchSize) {
        const item = lane.queue[0];
        if (count > 0 && bytes + item.bytes > this.options.maxBatchBytes) {
          full = true;
          break;
        }
        if (destinationsOf && this.holds.size > 0) {
          const held = this.holds.blocking(destinationsOf(item.event), lane.key);
          if (held !== undefined) {
            this.waitForDestination(lane, held);
            break;
          }
        }
        items.push(lane.queue.shift() as LaneItem);
        count++;
        bytes += item.bytes;
      }
      if (items.length > 0) {
        lane.busy = true;
        entries.push({ lane, items });
      }
      if (full && items.length === 0) break; // the lane stays first for the next batch
      this.ready.shift();
      lane.inReady = false;
      if (full) break;
    }
    return entries;
  }

  private waitForDestination(lane: AggregateLane, destination: string): void {
    const retryAt = this.holds.wait(destination, lane.key) ?? this.deps.now();
    lane.mode = 'blocked';
    lane.heldBy = destination;
    lane.retryAt = retryAt;
    this.retries.delete(lane.key);
    this.dropQueue(lane, []);
    this.armTimer();
    this.parkIfOver(lane);
  }

  private async runBatch(
    entries: Array<{ lane: AggregateLane; items: LaneItem[] }>,
  ): Promise<void> {
    const events = entries.flatMap((entry) => entry.items.map((item) => item.event));
    let outcomes: PublishOutcome[];
    try {
      outcomes = await this.deps.publisher.publish(events, {
        signal: this.abandon.signal,
        // Read by the publisher right before each send: a pause after this batch was taken
        // must not end in a send once the lease ran out.
        mayStillSend: this.deps.leaseValid,
      });
      if (!Array.isArray(outcomes) || outcomes.length !== events.length) {
        throw new Error(
          `the publisher returned ${Array.isArray(outcomes) ? outcomes.length : typeof outcomes} outcomes for ${events.length} events`,
        );
      }
    } catch (error) {
      outcomes = events.map(() => ({
        status: 'retriable',
        error: asError(error),
        scope: 'broker',
      }));
    }
    // Also after close(): what the broker acknowledged is settled and marked.
    const now = this.deps.now();
    const context = {
      now,
      maxAttempts: this.options.maxAttempts,
      backoff: this.options.backoff,
      random: this.deps.random,
    };
    let offset = 0;
    const judged = entries.map((entry) => {
      const judgement = judgeLane(
        entry.items,
        outcomes.slice(offset, offset + entry.items.length),
        context,
      );
      offset += entry.items.length;
      return { entry, judgement };
    });
    const accepted = judged.flatMap(({ judgement }) => judgement.accepted);
    if (accepted.length > 0) this.accepted(accepted, now);
    for (const { entry, judgement } of judged) this.apply(entry.lane, entry.items, judgement, now);
  }

  private accepted(items: readonly LaneItem[], now: number): void {
    this.deps.metrics.published += items.length;
    if (this.outageFailures > 0) {
      this.outageFailures = 0;
      this.pausedUntil = 0;
      this.deps.logger.log('The broker accepts events again; publishing resumed.');
    }
    const destinationsOf = this.deps.publisher.destinationsOf?.bind(this.deps.publisher);
    if (destinationsOf && this.holds.size > 0) {
      const held = this.holds.size;
      for (const item of items) {
        for (const key of this.holds.succeeded(destinationsOf(item.event), now)) {
          const lane = this.lanes.get(key);
          if (lane?.mode === 'blocked' && lane.heldBy !== undefined) this.startCatchUp(lane);
        }
      }
      if (this.holds.size < held) this.rescanMarks();
    }
    const ids = items.map((item) => item.event._id);
    const keys = items.map((item) => item.id);
    // Acknowledged, so safe to settle now; if the mark does not land the event stays pending
    // and is published again later (a duplicate, never a loss). Until it lands, a catch-up page
    // that still finds the event pending skips it.
    const mark = this.deps.writes.markPublished(ids, new Date(now)).catch((error: unknown) => {
      this.deps.logger.warn(
        `Could not mark ${ids.length} acknowledged events published (they will be sent again): ${describeError(error)}`,
      );
    });
    this.acked.marked(keys, mark);
    this.track(mark);
  }

  private apply(
    lane: AggregateLane,
    items: readonly LaneItem[],
    { accepted, verdict }: LaneJudgement,
    now: number,
  ): void {
    lane.busy = false;
    for (const item of accepted) {
      this.finish(lane, item);
      item.settles.forEach((settle) => settle());
    }
    const acceptedSet = accepted.length > 0 ? new Set(accepted) : undefined;
    const after = (from: number): LaneItem[] =>
      items.slice(from).filter((item) => !acceptedSet?.has(item));
    switch (verdict.kind) {
      case 'accepted':
        break;
      case 'broker':
        lane.queue.unshift(...after(verdict.from));
        this.pause(verdict.error);
        break;
      case 'destination': {
        const retryAt = this.holds.fail(
          verdict.destination,
          lane.key,
          describeError(verdict.error),
          now,
        );
        lane.mode = 'blocked';
        lane.heldBy = verdict.destination;
        lane.retryAt = retryAt;
        this.retries.delete(lane.key);
        this.dropQueue(lane, after(verdict.from));
        this.armTimer();
        this.parkIfOver(lane);
        break;
      }
      case 'failure': {
        const failed = items[verdict.at];
        const { record } = verdict;
        this.deps.metrics.retried++;
        this.deps.logger.warn(
          `Event ${failed.event.eventId} (aggregate ${lane.ref.aggregateType}/${lane.ref.aggregateId}) failed attempt ` +
            `${record.attempts}/${this.options.maxAttempts}, retry at ${record.nextAttemptAt.toISOString()}: ${record.error}`,
        );
        this.finish(lane, failed);
        this.blockUntil(lane, record.nextAttemptAt.getTime());
        const write = this.durable.run('a failure record', () =>
          this.deps.writes.recordFailure(failed.event, record),
        );
        this.rescans.markerWrite(write);
        this.track(
          write.then((landed) => {
            if (landed) failed.settles.forEach((settle) => settle());
          }),
        );
        this.dropQueue(lane, after(verdict.at + 1));
        this.parkIfOver(lane);
        break;
      }
      case 'dead': {
        const dead = items[verdict.at];
        lane.queue.unshift(...after(verdict.at + 1));
        this.finish(lane, dead);
        lane.busy = true; // later events of the aggregate wait until the dead mark is durable
        this.track(this.deadLetter(lane, dead, verdict.record));
        return;
      }
    }
    this.continueLane(lane);
  }

  private async deadLetter(
    lane: AggregateLane,
    item: LaneItem,
    record: DeadLetterRecord,
  ): Promise<void> {
    const landed = await this.durable.run('a dead-letter mark', () =>
      this.deps.writes.markDead(item.event, record),
    );
    lane.busy = false;
    if (!landed) return;
    this.deps.metrics.deadLettered++;
    this.deps.logger.error(
      `Event ${item.event.eventId} (${item.event.eventType}, aggregate ${lane.ref.aggregateType}/${lane.ref.aggregateId}) ` +
        `moved to the dead-letter collection after ${record.attempts} attempt(s) (${record.reason}): ${record.error}`,
    );
    item.settles.forEach((settle) => settle());
    this.continueLane(lane);
    this.pump();
    const marked = { ...item.event, status: 'dead', deadLetter: record } as const;
    try {
      await this.deps.writes.copyToDeadLetters(marked as never);
      await this.deps.writes.removeDead(item.event._id);
    } catch (error) {
      this.deps.logger.warn(
        `Dead-lettered event ${item.event.eventId} is marked dead; moving it to the dead-letter collection failed ` +
          `(the sweep finishes it): ${describeError(error)}`,
      );
    }
  }

  private pause(error: Error): void {
    if (this.closed) return;
    this.outageFailures++;
    const first = Math.min(this.options.backoff.initialMs, 1000);
    const delay = Math.min(
      Math.min(this.options.backoff.maxMs, 30_000),
      first * 2 ** Math.min(this.outageFailures - 1, 20),
    );
    this.pausedUntil = this.deps.clock.monotonic() + delay;
    if (this.outageFailures === 1) {
      this.deps.metrics.outages++;
      this.deps.logger.warn(
        `The broker is unavailable (${describeError(error)}); publishing paused and retried with backoff. ` +
          'No attempt is counted against the events.',
      );
    }
    this.armTimer();
  }
}
