import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { describeError } from '../../common/errors/describe-error';
import type { OutboxRelayStore } from '../ports/outbox-relay.store';
import type { RelayLogger } from '../ports/relay-logger';
import type { AckedEvents, ReadTicket } from './acked-events';
import type { AggregateLane, LaneItem } from './aggregate.lane';
import type { InFlightBudget, Reservation } from './in-flight.budget';

export interface CatchUpReaderDeps {
  outbox: Pick<OutboxRelayStore, 'findPendingOfAggregate'>;
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

/**
 * Catch-up reads: the pending events of a lane in `catchup` mode, read from the collection page
 * by page in aggregate order, a few lanes at once, each page under an in-flight reservation.
 * A page stops before an event that waits for its retry (the lane then waits for it), and
 * before a scheduled event not due by `dueBy` (the due reader asks for the aggregate again).
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

  private async readPage(lane: AggregateLane): Promise<void> {
    // A page leaves room for the change stream's read while it is idle.
    const { budget, batchSize } = this.deps;
    const reservation = await budget.reserve(budget.pageBesideIdle(batchSize));
    if (this.deps.closed() || lane.mode !== 'catchup' || reservation.events === 0) {
      this.deps.budget.settleReservation(reservation, 0, 0);
      lane.reading = false;
      return;
    }
    lane.more = false;
    for (;;) {
      const read = this.deps.acked.openRead();
      let marks: Promise<unknown>[] | undefined;
      try {
        marks = await this.readPageWith(lane, reservation, read);
      } finally {
        this.deps.acked.closeRead(read);
      }
      if (!marks) return;
      // Only events whose published mark is on its way: read again once it landed, under the
      // same reservation (given back, it could go to a read that then waits the idle time).
      await Promise.allSettled(marks);
      if (this.deps.closed() || lane.mode !== 'catchup') {
        this.deps.budget.settleReservation(reservation, 0, 0);
        lane.reading = false;
        return;
      }
    }
  }

  /** Reads one page and takes it in; returns the marks to wait for when it found only events being marked. */
  private async readPageWith(
    lane: AggregateLane,
    reservation: Reservation,
    read: ReadTicket,
  ): Promise<Promise<unknown>[] | undefined> {
    const { deps } = this;
    let events: OutboxEventRecord[];
    try {
      events = await deps.outbox.findPendingOfAggregate(lane.ref, reservation.events, deps.dueBy());
    } catch (error) {
      deps.budget.settleReservation(reservation, 0, 0);
      lane.reading = false;
      if (deps.closed()) return;
      deps.logger.warn(
        `Could not read pending events of ${lane.ref.aggregateType}/${lane.ref.aggregateId} (retrying): ${describeError(error)}`,
      );
      deps.blockUntil(lane, deps.now() + deps.retryMs);
      return undefined;
    }
    lane.reading = false;
    if (deps.closed() || lane.mode !== 'catchup') {
      deps.budget.settleReservation(reservation, 0, 0);
      return undefined;
    }
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
      const item: LaneItem = { event, id, bytes: deps.sizeOf(event), settles: [] };
      lane.add(item);
      queued++;
      bytes += item.bytes;
    }
    if (events.length >= reservation.events) lane.more = true;
    if (blockAt === undefined && queued === 0 && skipped.length > 0 && lane.queue.length === 0) {
      lane.reading = true;
      return deps.acked.pendingMarks(skipped);
    }
    deps.budget.settleReservation(reservation, queued, bytes);
    if (blockAt !== undefined) deps.blockUntil(lane, blockAt);
    else deps.continueLane(lane);
    deps.pump();
    return undefined;
  }
}
