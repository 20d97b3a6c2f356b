import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { asError, describeError } from '../../common/errors/describe-error';
import type { PublishOutcome } from '../../publisher/outbox-publisher.interface';
import type { AggregateRef } from '../ports/outbox-relay.store';
import type { RelayTimer } from '../ports/relay-clock';
import { aggregateKey } from '../../documents/outbox-event.document';
import { laneItem } from './aggregate.lane';
import type { AggregateLane, LaneItem, Settle } from './aggregate.lane';
import { AckedEvents } from './acked-events';
import type { ReadTicket } from './acked-events';
import { BatchQueue } from './batch.queue';
import type { BatchEntry } from './batch.queue';
import { BrokerPause } from './broker.pause';
import { CatchUpReader } from './catchup.reader';
import { DestinationHolds } from './destination.holds';
import { DurableWrites } from './durable.writes';
import { HeldBackMarker } from './held-back.marker';
import { InFlightBudget } from './in-flight.budget';
import type { Reservation } from './in-flight.budget';
import { LaneSteps } from './lane.steps';
import { LaneTable } from './lane.table';
import { MarksRescan } from './marks.rescan';
import { OutcomeApplier } from './outcome.applier';
import { CatchUpRequests } from './catchup.requests';
import type { Offer, RelayEngineDeps, RelayEngineOptions } from './relay-engine.deps';

export type { Offer, RelayEngineDeps, RelayEngineOptions } from './relay-engine.deps';

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
  private readonly batches: BatchQueue;
  private readonly reader: CatchUpReader;
  /** The due reader's requests to read aggregates from the collection (`requestCatchUp`). */
  readonly catchUps: CatchUpRequests;
  private readonly pause: BrokerPause;
  private readonly steps: LaneSteps;
  private readonly outcomes: OutcomeApplier;
  private calls = 0;
  private readonly holds: DestinationHolds;
  private readonly marker: HeldBackMarker;
  private readonly rescans: MarksRescan;
  private readonly tasks = new Set<Promise<void>>();
  /** Acknowledged by the broker, their published mark maybe not visible yet: not to be published again. */
  private readonly acked = new AckedEvents();
  private closed = false;
  /** Takes in reads and starts catch-up reads (see `RelayEngineDeps.takingWork`). */
  private readonly reading: () => boolean;
  /** Aborted when the engine gives up on its publish calls (see `close`). */
  private readonly abandon = new AbortController();

  constructor(
    private readonly options: RelayEngineOptions,
    private readonly deps: RelayEngineDeps,
  ) {
    const { clock, now, logger } = deps;
    const closed = (): boolean => this.closed;
    // Reads: none taken in or started once the term ends (before `close`, which waits for the
    // stream follower: a read answered to the ended term would start catch-up reads of its own).
    const reading = (): boolean => !this.closed && (deps.takingWork?.() ?? true);
    this.reading = reading;
    const track = (task: Promise<void>): void => this.track(task);
    const pump = (): void => this.pump();
    const rescanMarks = (): void => this.rescanMarks();
    const budget = deps.budget ?? new InFlightBudget(options.maxInFlight, options.maxInFlightBytes);
    const lanes = new LaneTable(() => budget.maxEvents);
    const holds = new DestinationHolds(options.backoff, deps.random, deps.holdsLogger);
    const rescans = new MarksRescan({
      ...{ outbox: deps.outbox, lanes, now, closed, track, logger },
      holding: () => holds.size > 0,
      holdUntil: (ref, retryAt) => this.holdUntil(ref, retryAt),
    });
    const durable = new DurableWrites(
      clock,
      options.backoff,
      deps.random,
      logger,
      this.abandon.signal,
    );
    const marker = new HeldBackMarker({
      ...{ durable, writes: deps.writes, track },
      markerWrite: (write) => rescans.markerWrite(write),
    });
    const batches = new BatchQueue(options);
    const pause = new BrokerPause(clock, options.backoff, logger, deps.metrics);
    const acked = this.acked;
    this.reader = new CatchUpReader({
      ...{ outbox: deps.outbox, budget, acked, now, track, pump, logger },
      closed: () => !reading(),
      dueBy: deps.dueBy ?? (() => new Date(0)),
      ...{ batchSize: options.batchSize, concurrency: options.readConcurrency ?? 4 },
      retryMs: options.backoff.initialMs,
      sizeOf: (event) => this.sizeOf(event),
      blockUntil: (lane, retryAt) => {
        this.steps.blockUntil(lane, retryAt);
        this.steps.parkIfOver(lane);
      },
      continueLane: (lane) => this.steps.continueLane(lane),
    });
    const steps = new LaneSteps({
      ...{ lanes, holds, batches, marker, budget, pause, closed, clock, now, pump, rescanMarks },
      read: (lane) => this.reader.request(lane),
    });
    this.outcomes = new OutcomeApplier({
      ...{ lanes, holds, pause, durable, rescans, acked, closed, steps, track, pump },
      ...{ maxAttempts: options.maxAttempts, backoff: options.backoff, random: deps.random },
      ...{ now, writes: deps.writes, metrics: deps.metrics, logger },
      destinationsOf: deps.publisher.destinationsOf?.bind(deps.publisher),
    });
    this.catchUps = new CatchUpRequests({
      ...{ lanes, holds, steps, closed },
      readsQueued: () => this.reader.waiting,
    });
    this.budget = budget;
    this.lanes = lanes;
    this.holds = holds;
    this.rescans = rescans;
    this.marker = marker;
    this.batches = batches;
    this.pause = pause;
    this.steps = steps;
  }

  /** Aggregates tracked (publishing, blocked, catching up). */
  get trackedAggregates(): number {
    return this.lanes.size;
  }

  status() {
    return {
      inFlight: { events: this.budget.events, bytes: this.budget.bytes },
      trackedAggregates: this.lanes.size,
      heldDestinations: this.holds.snapshot(),
      brokerPausedUntil: this.pause.endsAt(),
      configurationError: this.pause.configurationError(),
    };
  }

  /**
   * Takes events read under `reservation` (change stream or drain; commit order per aggregate),
   * by the read of `read` (see `offerRead`). Events of an aggregate that waits or catches up are
   * left pending with a marker.
   */
  offer(offers: readonly Offer[], reservation: Reservation, read?: ReadTicket): void {
    let queued = 0;
    let bytes = 0;
    for (const { event, settle } of offers) {
      if (!this.reading()) break;
      const id = String(event._id);
      if (this.acked.has(id, read)) {
        settle(); // acknowledged already; the read did not see its mark yet
        continue;
      }
      const key = aggregateKey(event);
      const tracked = this.lanes.get(key);
      if (!tracked && (event.nextAttemptAt || this.lanes.untracked.mayHave(key))) {
        this.offerMarked(event, settle);
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
        this.offerMarked(event, settle); // marked by an earlier term: its lane reads it in order
        continue;
      }
      const item = laneItem(event, id, this.sizeOf(event), [settle]);
      lane.add(item);
      queued++;
      bytes += item.held;
      this.batches.add(lane);
    }
    this.budget.settleReservation(reservation, queued, bytes);
    this.pump();
  }

  /**
   * Offers what `read` finds in the collection, under `reservation` (see `offer`): an event whose
   * published mark lands during the read is not taken as pending. Returns the offers; a failed
   * read gives the reservation back and rejects.
   */
  async offerRead(
    reservation: Reservation,
    read: () => Promise<readonly Offer[]>,
  ): Promise<readonly Offer[]> {
    const ticket = this.acked.openRead();
    let offers: readonly Offer[];
    try {
      offers = await read();
    } catch (error) {
      this.acked.closeRead(ticket);
      this.budget.settleReservation(reservation, 0, 0);
      throw error;
    }
    this.offer(offers, reservation, ticket);
    this.acked.closeRead(ticket);
    return offers;
  }

  /**
   * An aggregate known to have marked events (read at start-up and by `rescanMarks`): it waits
   * until `retryAt`, then is read from the collection; noted as untracked when there is no room.
   */
  holdUntil(ref: AggregateRef, retryAt: Date): void {
    if (this.closed) return;
    const lane = this.lanes.admit(ref, true);
    if (lane?.mode === 'live' && lane.queue.length === 0 && !lane.busy) {
      this.steps.blockUntil(lane, retryAt.getTime());
    }
  }

  /**
   * Reads the aggregate's pending events from the collection, now or once a lane is free
   * (`CatchUpRequests`). False when tracked or too many wait.
   */
  requestCatchUp(ref: AggregateRef): boolean {
    return this.catchUps.request(ref);
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
    this.steps.stop();
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
    this.batches.clear();
    this.reader.clear();
    this.catchUps.clear();
    this.steps.clear();
    return finished;
  }

  /**
   * A marked event, or one of an aggregate without a lane that may have marked events: left
   * pending (with a marker), and the aggregate read from the collection in order (now, or at the
   * event's retry, when a lane fits; else by the sweep or the rescan of the marks).
   */
  private offerMarked(event: OutboxEventRecord, settle: Settle): void {
    if (!event.nextAttemptAt) this.lanes.untracked.add(aggregateKey(event));
    this.marker.holdBack(event, settle); // settled at once when marked already
    const lane = this.lanes.admit(event, true);
    if (!lane) return;
    const retryAt = event.nextAttemptAt ? new Date(event.nextAttemptAt).getTime() : 0;
    if (retryAt > this.deps.now()) this.steps.blockUntil(lane, retryAt);
    else this.steps.startCatchUp(lane);
  }

  private sizeOf(event: OutboxEventRecord): number {
    return this.deps.publisher.sizeOf?.(event) ?? eventSize(event);
  }

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
    if (this.pause.remaining() > 0) {
      this.steps.armTimer();
      return;
    }
    if (!this.deps.canPublish()) return;
    const destinationsOf = this.deps.publisher.destinationsOf?.bind(this.deps.publisher);
    const heldBy = (lane: AggregateLane, item: LaneItem): string | undefined =>
      destinationsOf && this.holds.size > 0
        ? this.holds.blocking(destinationsOf(item.event), lane.key)
        : undefined;
    const onHeld = (lane: AggregateLane, destination: string): void => {
      this.holds.wait(destination, lane.key);
      this.steps.holdOn(lane, destination, []);
    };
    while (this.calls < this.options.publishConcurrency && this.batches.size > 0) {
      const entries = this.batches.take(heldBy, onHeld);
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

  private async runBatch(entries: BatchEntry[]): Promise<void> {
    const events: OutboxEventRecord[] = [];
    for (const entry of entries) for (const item of entry.items) events.push(item.event);
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
    this.outcomes.apply(entries, outcomes);
  }
}

/** Rough wire size of an event for a publisher that does not say (`sizeOf`): key, JSON payload, headers. */
function eventSize(event: OutboxEventRecord): number {
  let size = 64 + event.aggregateId.length + event.eventType.length + event.aggregateType.length;
  size += Buffer.byteLength(JSON.stringify(event.payload ?? null));
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    size += name.length + String(value).length;
  }
  return size;
}
