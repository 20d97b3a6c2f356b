import { aggregateKey, type OutboxEventRecord } from '../../documents/outbox-event.document';
import { describeError } from '../../common/errors/describe-error';
import { groupBy } from '../../common/group-by';
import type { OutboxRelayStore } from '../ports/outbox-relay.store';
import type { RelayLogger } from '../ports/relay-logger';
import type { AckedEvents, ReadTicket } from './acked-events';
import { laneItem } from './aggregate.lane';
import type { AggregateLane } from './aggregate.lane';
import type { InFlightBudget, Reservation } from './in-flight.budget';

export interface CatchUpReaderDeps {
  outbox: Pick<OutboxRelayStore, 'findPendingOfAggregates'>;
  budget: InFlightBudget;
  acked: AckedEvents;
  batchSize: number;
  /** Pages read at once. */
  concurrency: number;
  /** How long a lane waits after a failed read, ms. */
  retryMs: number;
  now: () => number;
  /** Scheduled events due by this server time are read; a page stops before a later one. */
  dueBy: () => Date;
  closed: () => boolean;
  sizeOf: (event: OutboxEventRecord) => number;
  track: (task: Promise<void>) => void;
  /** The lane waits until `retryAt` (server time), then is read again. */
  blockUntil: (lane: AggregateLane, retryAt: number) => void;
  /** A page was taken in: the lane's next step, then publishing. */
  continueLane: (lane: AggregateLane) => void;
  pump: () => void;
  logger: RelayLogger;
}

/** Lanes read together at most (one query for their pending events). */
const GROUP = 100;

/** What a page did for a lane. */
type Outcome =
  | { kind: 'taken'; blockAt?: number }
  /** No longer catching up (or the relay closed). */
  | { kind: 'gone' }
  /** Left out of a full page: read again first. */
  | { kind: 'again' }
  /** Only events whose published mark is on its way: read again once they landed. */
  | { kind: 'marked'; marks: Promise<unknown>[] };

/**
 * Catch-up reads: the pending events of lanes in `catchup` mode, read from the collection page
 * by page in aggregate order, a few reads at once, each page under an in-flight reservation.
 * A read takes the first lane waiting and, in the same query, up to `GROUP` more of its type
 * (as many as the reservation has events): a burst of due aggregates costs a query per page,
 * not one per aggregate. A page answers aggregate by aggregate, so only its last aggregate may
 * have more (the lane reads again once it is published); when full, the lanes it left out are
 * read first with the next page. A lane's events stop before one that waits for its retry (the
 * lane then waits for it), and before a scheduled event not due by `dueBy` (the due reader asks
 * for the aggregate again).
 */
export class CatchUpReader {
  private queue: AggregateLane[] = [];
  private reads = 0;

  constructor(private readonly deps: CatchUpReaderDeps) {}

  /** Lanes waiting for a read. */
  get waiting(): number {
    return this.queue.length;
  }

  request(lane: AggregateLane): void {
    lane.reading = true;
    this.queue.push(lane);
    this.pumpReads();
  }

  clear(): void {
    this.queue = [];
  }

  private pumpReads(): void {
    const { deps } = this;
    while (!deps.closed() && this.reads < deps.concurrency && this.queue.length > 0) {
      const lane = this.queue.shift() as AggregateLane;
      this.reads++;
      deps.track(
        this.readPage(lane).finally(() => {
          this.reads--;
          this.pumpReads();
        }),
      );
    }
  }

  /** Up to `room` more queued lanes of `lane`'s type, taken from the queue. */
  private groupOf(lane: AggregateLane, room: number): AggregateLane[] {
    const group = [lane];
    if (room <= 1) return group;
    this.queue = this.queue.filter((other) => {
      if (group.length >= room || other.ref.aggregateType !== lane.ref.aggregateType) return true;
      group.push(other);
      return false;
    });
    return group;
  }

  private stopReading(lanes: readonly AggregateLane[]): void {
    for (const lane of lanes) lane.reading = false;
  }

  private async readPage(first: AggregateLane): Promise<void> {
    // A page leaves room for the change stream's read while it is idle.
    const { budget, batchSize } = this.deps;
    const reservation = await budget.reserve(budget.pageBesideIdle(batchSize));
    let lanes = this.groupOf(first, Math.min(GROUP, reservation.events));
    for (const lane of lanes) lane.more = false;
    for (;;) {
      const reading = lanes.filter((lane) => lane.mode === 'catchup');
      this.stopReading(lanes.filter((lane) => lane.mode !== 'catchup'));
      if (this.deps.closed() || reading.length === 0 || reservation.events === 0) {
        this.deps.budget.settleReservation(reservation, 0, 0);
        this.stopReading(reading);
        return;
      }
      const read = this.deps.acked.openRead();
      let waiting: { lanes: AggregateLane[]; marks: Promise<unknown>[] } | undefined;
      try {
        waiting = await this.readPageWith(reading, reservation, read);
      } finally {
        this.deps.acked.closeRead(read);
      }
      if (!waiting) return;
      // Only events whose published mark is on its way: read again once it landed, under the
      // same reservation (given back, it could go to a read that then waits the idle time).
      await Promise.allSettled(waiting.marks);
      lanes = waiting.lanes;
    }
  }

  /**
   * Reads one page of `lanes` and takes it in; returns the lanes to read again and the marks to
   * wait for first when it found only events being marked (the reservation is kept for them).
   */
  private async readPageWith(
    lanes: AggregateLane[],
    reservation: Reservation,
    read: ReadTicket,
  ): Promise<{ lanes: AggregateLane[]; marks: Promise<unknown>[] } | undefined> {
    const { deps } = this;
    let events: OutboxEventRecord[];
    try {
      const refs = lanes.map((lane) => lane.ref);
      events = await deps.outbox.findPendingOfAggregates(refs, reservation.events, deps.dueBy());
    } catch (error) {
      deps.budget.settleReservation(reservation, 0, 0);
      this.stopReading(lanes);
      if (deps.closed()) return;
      const what =
        lanes.length === 1
          ? `${lanes[0].ref.aggregateType}/${lanes[0].ref.aggregateId}`
          : `${lanes.length} aggregates`;
      deps.logger.warn(
        `Could not read pending events of ${what} (retrying): ${describeError(error)}`,
      );
      for (const lane of lanes) deps.blockUntil(lane, deps.now() + deps.retryMs);
      return undefined;
    }
    const byLane = groupBy(events, aggregateKey);
    const full = events.length >= reservation.events;
    const cut = full ? aggregateKey(events[events.length - 1]) : undefined;
    const held = { count: 0, bytes: 0 };
    const outcomes = lanes.map((lane): Outcome => {
      if (deps.closed() || lane.mode !== 'catchup') return { kind: 'gone' };
      const own = byLane.get(lane.key);
      if (full && !own) return { kind: 'again' };
      return this.take(lane, own ?? [], read, held, lane.key === cut);
    });
    const of = (kind: Outcome['kind']) => lanes.filter((_, i) => outcomes[i].kind === kind);
    this.stopReading(of('gone'));
    const marked = of('marked');
    const marks = outcomes.flatMap((outcome) => (outcome.kind === 'marked' ? outcome.marks : []));
    if (marked.length > 0 && of('taken').length === 0)
      return { lanes: [...marked, ...of('again')], marks };
    deps.budget.settleReservation(reservation, held.count, held.bytes);
    this.queue.unshift(...of('again'));
    if (marked.length > 0) {
      void Promise.allSettled(marks).then(() => {
        if (deps.closed()) return this.stopReading(marked);
        this.queue.push(...marked);
        this.pumpReads();
      });
    }
    lanes.forEach((lane, i) => {
      const outcome = outcomes[i];
      if (outcome.kind !== 'taken') return;
      if (outcome.blockAt !== undefined) deps.blockUntil(lane, outcome.blockAt);
      else deps.continueLane(lane);
    });
    deps.pump();
    return undefined;
  }

  /** Takes in a lane's events of a page (`cut`: the page may have left some of them out). */
  private take(
    lane: AggregateLane,
    events: readonly OutboxEventRecord[],
    read: ReadTicket,
    held: { count: number; bytes: number },
    cut: boolean,
  ): Outcome {
    const { deps } = this;
    lane.reading = false;
    const now = deps.now();
    let queued = 0;
    let bytes = 0;
    let blockAt: number | undefined;
    const skipped: string[] = [];
    for (const event of events) {
      const id = String(event._id);
      if (deps.acked.has(id, read)) {
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
      const item = laneItem(event, id, deps.sizeOf(event), []);
      lane.add(item);
      queued++;
      bytes += item.held;
    }
    if (cut) lane.more = true;
    if (blockAt === undefined && queued === 0 && skipped.length > 0 && lane.queue.length === 0) {
      lane.reading = true;
      return { kind: 'marked', marks: deps.acked.pendingMarks(skipped) };
    }
    held.count += queued;
    held.bytes += bytes;
    return { kind: 'taken', blockAt };
  }
}
