import { Logger } from '@nestjs/common';
import type { OutboxEventRecord } from '../common/envelope';
import type { OutboxPublisher, PublishOutcome } from '../publisher/outbox-publisher.interface';
import { asError, describeError } from '../common/errors/describe-error';
import { backoffDelay } from './backoff';
import type { OutboxRelayMetrics } from './relay.metrics';
import type { ResolvedRelayOptions } from './relay.options';
import type {
  AggregateRef,
  DeadLetterRecord,
  FailureRecord,
  OutboxRelayStore,
} from './relay.store';

export interface RelayEngineOptions {
  batchSize: number;
  maxInFlight: number;
  maxAttempts: number;
  backoff: ResolvedRelayOptions['backoff'];
  /** Publish calls in flight at once (never two with events of the same aggregate). */
  publishConcurrency: number;
  /** Checked before each publish call: false stops publishing (lease lost). */
  canPublish?: () => boolean;
  random?: () => number;
}

type Settle = () => void;

interface Item {
  event: OutboxEventRecord;
  id: string;
  /** Called once the event's fate is durable (acked, dead-lettered, or failure recorded). */
  settles: Settle[];
}

/**
 * - `live`: events are queued and published in arrival order (commit order for the stream).
 * - `blocked`: an event waits for its retry; new events of the aggregate are left in the
 *   collection (pending) and read back from there when the retry is due.
 * - `catchup`: the aggregate's pending events are read from the collection page by page,
 *   in aggregate order; events arriving meanwhile are left there too (and cause one more page).
 */
type LaneMode = 'live' | 'blocked' | 'catchup';

interface Lane {
  key: string;
  ref: AggregateRef;
  mode: LaneMode;
  queue: Item[];
  /** Queued and in-flight items by id (dedupe of stream/sweep/catch-up overlaps). */
  ids: Map<string, Item>;
  busy: boolean;
  inReady: boolean;
  retryAt: number;
  /** The failure that blocks this lane is recorded in the collection (`nextAttemptAt`). */
  persisted: boolean;
  dirty: boolean;
  pageFull: boolean;
  /** Settlements held back until the aggregate is live again (see `offer`). */
  deferred: Settle[];
}

interface Entry {
  lane: Lane;
  items: Item[];
}

interface Plan {
  lane: Lane;
  published: Item[];
  dead: Array<{ item: Item; record: DeadLetterRecord }>;
  failure?: { item: Item; record: FailureRecord };
  requeue: Item[];
  dropped: Item[];
  blockAt: number;
  outage?: Error;
}

const noop: Settle = () => undefined;

export function aggregateKey(ref: AggregateRef): string {
  return `${ref.aggregateType}\u0000${ref.aggregateId}`;
}

/**
 * The relay's core, free of MongoDB and Kafka: per-aggregate lanes (commit order, a failing
 * event blocks only its own aggregate), batching, retries with backoff, dead letters, outage
 * pauses, and a bound on events held in memory. Feed it with `offer()` (change stream, drain)
 * and `requestCatchUp()` (sweep); it reads and writes through an `OutboxRelayStore` and sends
 * through an `OutboxPublisher`.
 *
 * Settlement callbacks passed to `offer()` tell the checkpoint bookkeeping when an event may
 * be passed over by the resume token: never before its fate is durable, and for an aggregate
 * that is catching up, not before every earlier event of it is (so that after a crash the
 * change stream replays them rather than letting a later event overtake).
 */
export class RelayEngine {
  private readonly logger = new Logger('OutboxRelay');
  private readonly lanes = new Map<string, Lane>();
  private ready: Lane[] = [];
  private held = 0;
  private readonly tasks = new Set<Promise<void>>();
  private calls = 0;
  private capacityWaiters: Array<() => void> = [];
  private pausedUntil = 0;
  private outageDelay = 0;
  private pauseTimer?: NodeJS.Timeout;
  private retryTimer?: NodeJS.Timeout;
  private retryTimerAt = Infinity;
  private closed = false;

  constructor(
    private readonly store: OutboxRelayStore,
    private readonly publisher: OutboxPublisher,
    private readonly options: RelayEngineOptions,
    private readonly metrics: OutboxRelayMetrics,
  ) {}

  /** Events held in memory (queued or being published). */
  get inFlight(): number {
    return this.held;
  }

  /** Aggregates the engine currently tracks (queued, publishing, blocked or catching up). */
  get activeAggregates(): number {
    return this.lanes.size;
  }

  hasCapacity(): boolean {
    return this.closed || this.held + this.options.batchSize <= this.options.maxInFlight;
  }

  /** Resolves when another batch of events may be offered without exceeding `maxInFlight`. */
  waitForCapacity(): Promise<void> {
    if (this.hasCapacity()) return Promise.resolve();
    return new Promise((resolve) => this.capacityWaiters.push(resolve));
  }

  /**
   * Hands over one pending event (in commit order per aggregate). `settle` is called when the
   * change event that carried it may be checkpointed. After `close()` nothing is settled.
   */
  offer(event: OutboxEventRecord, settle: Settle = noop): void {
    if (this.closed) return;
    const lane = this.laneOf(event);
    if (lane.mode === 'blocked') {
      // Left pending in the collection; read back when the retry is due.
      if (lane.persisted) settle();
      else lane.deferred.push(settle);
      return;
    }
    if (lane.mode === 'catchup') {
      lane.dirty = true;
      lane.deferred.push(settle);
      return;
    }
    const id = String(event._id);
    const existing = lane.ids.get(id);
    if (existing) {
      existing.settles.push(settle);
      return;
    }
    const retryAt = event.nextAttemptAt ? new Date(event.nextAttemptAt).getTime() : 0;
    if (retryAt > Date.now()) {
      this.block(lane, retryAt, true);
      settle();
      return;
    }
    const item: Item = { event, id, settles: [settle] };
    lane.queue.push(item);
    lane.ids.set(id, item);
    this.held++;
    this.markReady(lane);
    this.pump();
  }

  /** An aggregate known to wait for a retry (read at start-up): hold its events until `retryAt`. */
  holdUntil(ref: AggregateRef, retryAt: Date): void {
    if (this.closed) return;
    const lane = this.laneOf(ref);
    this.block(lane, Math.max(retryAt.getTime(), Date.now()), true);
  }

  /**
   * Reads the aggregate's pending events from the collection and publishes them in order
   * (sweep). Returns false when the aggregate is busy anyway (or memory is full).
   */
  requestCatchUp(ref: AggregateRef): boolean {
    if (this.closed || !this.hasCapacity()) return false;
    const existing = this.lanes.get(aggregateKey(ref));
    if (existing && (existing.mode !== 'live' || existing.busy || existing.queue.length > 0)) {
      return false;
    }
    this.startCatchUp(this.laneOf(ref));
    return true;
  }

  /**
   * Stops taking work, waits up to `timeoutMs` for publish calls in flight (their results are
   * recorded), then drops what is queued without settling it (it stays pending). Returns
   * whether everything in flight finished.
   */
  async close(timeoutMs: number): Promise<boolean> {
    this.closed = true;
    if (this.pauseTimer) clearTimeout(this.pauseTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimerAt = Infinity;
    this.releaseWaiters();
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      Promise.allSettled([...this.tasks]).then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    if (timer) clearTimeout(timer);
    this.lanes.clear();
    this.ready = [];
    this.held = 0;
    return finished;
  }

  /** Resolves when nothing is queued, in flight or catching up (blocked aggregates may remain). */
  async drained(): Promise<void> {
    while (!this.closed && (this.tasks.size > 0 || this.held > 0)) {
      await Promise.race([...this.tasks, new Promise((resolve) => setTimeout(resolve, 20))]);
    }
  }

  // ---------------------------------------------------------------- lanes

  private laneOf(ref: AggregateRef): Lane {
    const key = aggregateKey(ref);
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = {
        key,
        ref: { aggregateType: ref.aggregateType, aggregateId: ref.aggregateId },
        mode: 'live',
        queue: [],
        ids: new Map(),
        busy: false,
        inReady: false,
        retryAt: 0,
        persisted: true,
        dirty: false,
        pageFull: false,
        deferred: [],
      };
      this.lanes.set(key, lane);
    }
    return lane;
  }

  private markReady(lane: Lane): void {
    if (!lane.inReady && !lane.busy && lane.mode !== 'blocked' && lane.queue.length > 0) {
      lane.inReady = true;
      this.ready.push(lane);
    }
  }

  /** Holds the aggregate until `retryAt`; queued events are left to the collection. */
  private block(lane: Lane, retryAt: number, persisted: boolean): void {
    const wasBlocked = lane.mode === 'blocked';
    lane.mode = 'blocked';
    lane.retryAt = wasBlocked ? Math.max(lane.retryAt, retryAt) : retryAt;
    lane.persisted = wasBlocked ? lane.persisted && persisted : persisted;
    lane.dirty = false;
    for (const item of lane.queue) {
      lane.ids.delete(item.id);
      this.held--;
      if (lane.persisted) item.settles.forEach((settle) => settle());
      else lane.deferred.push(...item.settles);
    }
    lane.queue = [];
    if (lane.persisted) this.flushDeferred(lane);
    this.notifyCapacity();
    this.scheduleRetry();
  }

  private flushDeferred(lane: Lane): void {
    const deferred = lane.deferred;
    lane.deferred = [];
    deferred.forEach((settle) => settle());
  }

  private goLive(lane: Lane): void {
    lane.mode = 'live';
    lane.dirty = false;
    lane.pageFull = false;
    this.flushDeferred(lane);
    if (!lane.busy && lane.queue.length === 0) this.lanes.delete(lane.key);
    else this.markReady(lane);
  }

  private startCatchUp(lane: Lane): void {
    lane.mode = 'catchup';
    lane.dirty = false;
    lane.retryAt = 0;
    this.track(this.catchUp(lane));
  }

  private async catchUp(lane: Lane): Promise<void> {
    let events: OutboxEventRecord[];
    try {
      events = await this.store.findPendingOfAggregate(lane.ref, this.options.batchSize);
    } catch (error) {
      this.logger.warn(
        `Could not read pending events of ${lane.ref.aggregateType}/${lane.ref.aggregateId}: ${describeError(error)}`,
      );
      if (!this.closed) this.block(lane, Date.now() + this.options.backoff.initialMs, false);
      return;
    }
    if (this.closed || lane.mode !== 'catchup') return;
    const dirty = lane.dirty;
    lane.dirty = false;
    lane.pageFull = events.length >= this.options.batchSize || dirty;
    const now = Date.now();
    for (const event of events) {
      const retryAt = event.nextAttemptAt ? new Date(event.nextAttemptAt).getTime() : 0;
      if (retryAt > now) {
        if (lane.queue.length === 0) {
          this.block(lane, retryAt, true);
          return;
        }
        lane.pageFull = true; // publish what comes before it, then read again (and block)
        break;
      }
      const id = String(event._id);
      if (lane.ids.has(id)) continue;
      const item: Item = { event, id, settles: [] };
      lane.queue.push(item);
      lane.ids.set(id, item);
      this.held++;
    }
    this.continueLane(lane);
    this.pump();
  }

  private continueLane(lane: Lane): void {
    if (this.closed) return;
    if (lane.mode === 'blocked') {
      this.scheduleRetry();
      return;
    }
    if (lane.busy) return;
    if (lane.queue.length > 0) {
      this.markReady(lane);
      return;
    }
    if (lane.mode === 'catchup') {
      if (lane.pageFull || lane.dirty) this.startCatchUp(lane);
      else this.goLive(lane);
      return;
    }
    this.lanes.delete(lane.key);
  }

  // ---------------------------------------------------------------- retries

  private scheduleRetry(): void {
    if (this.closed) return;
    let earliest = Infinity;
    for (const lane of this.lanes.values()) {
      if (lane.mode === 'blocked' && lane.retryAt < earliest) earliest = lane.retryAt;
    }
    if (earliest === Infinity || earliest >= this.retryTimerAt) return;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimerAt = earliest;
    this.retryTimer = setTimeout(() => this.runDueRetries(), Math.max(0, earliest - Date.now()));
    this.retryTimer.unref?.();
  }

  private runDueRetries(): void {
    this.retryTimer = undefined;
    this.retryTimerAt = Infinity;
    if (this.closed) return;
    const now = Date.now();
    for (const lane of this.lanes.values()) {
      if (lane.mode !== 'blocked' || lane.retryAt > now) continue;
      if (lane.busy || !this.hasCapacity()) {
        lane.retryAt = now + 50;
        continue;
      }
      this.startCatchUp(lane);
    }
    this.scheduleRetry();
  }

  // ---------------------------------------------------------------- publishing

  private track(task: Promise<void>): void {
    const tracked = task
      .catch((error: unknown) => {
        this.logger.error(`Relay task failed unexpectedly: ${describeError(error)}`);
      })
      .finally(() => {
        this.tasks.delete(tracked);
      });
    this.tasks.add(tracked);
  }

  private pump(): void {
    if (this.closed) return;
    const now = Date.now();
    if (now < this.pausedUntil) {
      if (!this.pauseTimer) {
        this.pauseTimer = setTimeout(() => {
          this.pauseTimer = undefined;
          this.pump();
        }, this.pausedUntil - now);
        this.pauseTimer.unref?.();
      }
      return;
    }
    if (this.options.canPublish && !this.options.canPublish()) return;
    while (this.calls < this.options.publishConcurrency && this.ready.length > 0) {
      const entries: Entry[] = [];
      let size = 0;
      while (this.ready.length > 0 && size < this.options.batchSize) {
        const lane = this.ready.shift() as Lane;
        lane.inReady = false;
        if (lane.busy || lane.mode === 'blocked' || lane.queue.length === 0) continue;
        const items = lane.queue.splice(0, this.options.batchSize - size);
        lane.busy = true;
        size += items.length;
        entries.push({ lane, items });
      }
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

  private async runBatch(entries: Entry[]): Promise<void> {
    const events = entries.flatMap((entry) => entry.items.map((item) => item.event));
    let outcomes: PublishOutcome[];
    try {
      outcomes = await this.publisher.publish(events);
      if (!Array.isArray(outcomes) || outcomes.length !== events.length) {
        throw new Error(
          `the publisher returned ${Array.isArray(outcomes) ? outcomes.length : typeof outcomes} outcomes for ${events.length} events`,
        );
      }
    } catch (error) {
      outcomes = events.map(() => ({ status: 'retriable', error: asError(error) }));
    }
    const now = Date.now();
    const plans = this.plan(entries, outcomes, now);
    const published = plans.flatMap((plan) => plan.published);
    const unsafe = new Set<Item>();
    let outage: Error | undefined;

    if (published.length > 0) {
      this.metrics.published += published.length;
      if (this.outageDelay > 0) {
        this.outageDelay = 0;
        this.logger.log('The broker accepts events again; publishing resumed.');
      }
      try {
        await this.store.markPublished(
          published.map((item) => item.event._id),
          new Date(now),
        );
      } catch (error) {
        // Acknowledged by the broker, so safe to pass; it stays pending and is sent again later.
        this.logger.warn(
          `Could not mark ${published.length} events published (they will be sent again): ${describeError(error)}`,
        );
      }
    }
    for (const plan of plans) {
      outage ??= plan.outage;
      for (const { item, record } of plan.dead) {
        try {
          await this.store.deadLetter(item.event, record);
          this.metrics.deadLettered++;
          this.logger.error(
            `Event ${item.event.eventId} (${item.event.eventType}, aggregate ${plan.lane.ref.aggregateType}/${plan.lane.ref.aggregateId}) ` +
              `moved to the dead-letter collection after ${record.attempts} attempt(s) (${record.reason}): ${record.error}`,
          );
        } catch (error) {
          unsafe.add(item);
          this.logger.error(
            `Could not dead-letter event ${item.event.eventId}; it stays pending: ${describeError(error)}`,
          );
        }
      }
      if (plan.failure) {
        const { item, record } = plan.failure;
        this.metrics.retried++;
        try {
          await this.store.recordFailure(item.event, record);
        } catch (error) {
          unsafe.add(item);
          this.logger.warn(
            `Could not record the failure of event ${item.event.eventId}: ${describeError(error)}`,
          );
        }
        this.logger.warn(
          `Event ${item.event.eventId} (aggregate ${plan.lane.ref.aggregateType}/${plan.lane.ref.aggregateId}) failed ` +
            `attempt ${record.attempts}/${this.options.maxAttempts}, retry at ${record.nextAttemptAt.toISOString()}: ${record.error}`,
        );
      }
    }
    if (outage && !this.closed) this.pause(outage, now);

    for (const plan of plans) this.applyPlan(plan, unsafe, now);
    this.notifyCapacity();
  }

  /** Decides, per aggregate and in order, what each outcome means. No side effects. */
  private plan(entries: Entry[], outcomes: PublishOutcome[], now: number): Plan[] {
    const plans: Plan[] = [];
    let index = 0;
    for (const { lane, items } of entries) {
      const plan: Plan = { lane, published: [], dead: [], requeue: [], dropped: [], blockAt: 0 };
      let state: 'flow' | 'blocked' | 'requeue' = 'flow';
      for (const item of items) {
        const outcome = outcomes[index++];
        if (outcome?.status === 'ok') {
          // On the broker: mark it published whatever happened before it in this call.
          plan.published.push(item);
          continue;
        }
        if (state === 'requeue') {
          plan.requeue.push(item);
          continue;
        }
        if (state === 'blocked') {
          plan.dropped.push(item);
          continue;
        }
        const error = outcome?.error ?? new Error('no outcome');
        if (outcome?.status === 'retriable' && outcome.outage) {
          state = 'requeue';
          plan.requeue.push(item);
          plan.outage = error;
          continue;
        }
        const attempts = (item.event.attempts ?? 0) + 1;
        const text = describeError(error);
        if (outcome?.status === 'fatal' || attempts >= this.options.maxAttempts) {
          const reason = outcome?.status === 'fatal' ? 'rejected' : 'max-attempts';
          plan.dead.push({ item, record: { reason, error: text, attempts, at: new Date(now) } });
          continue;
        }
        const delay = backoffDelay(attempts, this.options.backoff, this.options.random);
        plan.failure = {
          item,
          record: {
            attempts,
            nextAttemptAt: new Date(now + delay),
            error: text,
            at: new Date(now),
          },
        };
        plan.blockAt = now + delay;
        state = 'blocked';
      }
      plans.push(plan);
    }
    return plans;
  }

  private applyPlan(plan: Plan, unsafe: Set<Item>, now: number): void {
    const { lane } = plan;
    lane.busy = false;
    const done = (item: Item, deferIt: boolean): void => {
      lane.ids.delete(item.id);
      this.held--;
      if (deferIt) lane.deferred.push(...item.settles);
      else item.settles.forEach((settle) => settle());
    };
    const failed = plan.failure?.item;
    const failedUnsafe = failed !== undefined && unsafe.has(failed);
    const deadUnsafe = plan.dead.some(({ item }) => unsafe.has(item));
    for (const item of plan.published) done(item, false);
    for (const { item } of plan.dead) done(item, unsafe.has(item));
    if (failed) done(failed, failedUnsafe);
    for (const item of plan.dropped) done(item, failedUnsafe);
    if (plan.requeue.length > 0) lane.queue.unshift(...plan.requeue);
    if (this.closed) return;
    if (failed) this.block(lane, plan.blockAt, !failedUnsafe && !deadUnsafe);
    else if (deadUnsafe) this.block(lane, now + this.options.backoff.initialMs, false);
    this.continueLane(lane);
  }

  private pause(outage: Error, now: number): void {
    const wasPaused = this.outageDelay > 0;
    this.outageDelay = wasPaused
      ? Math.min(Math.min(this.options.backoff.maxMs, 30_000), this.outageDelay * 2)
      : Math.min(this.options.backoff.initialMs, 1000);
    this.pausedUntil = now + this.outageDelay;
    if (!wasPaused) {
      this.metrics.outages++;
      this.logger.warn(
        `The broker is unavailable (${describeError(outage)}); publishing paused and retried with backoff. ` +
          'No attempt is counted against the events.',
      );
    }
  }

  private notifyCapacity(): void {
    if (!this.hasCapacity()) return;
    this.releaseWaiters();
  }

  private releaseWaiters(): void {
    const waiters = this.capacityWaiters;
    this.capacityWaiters = [];
    waiters.forEach((resolve) => resolve());
  }
}
