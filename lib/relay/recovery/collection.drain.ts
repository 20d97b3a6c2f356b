import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import type { RelayEngine } from '../engine/relay.engine';
import type { OutboxRelayStore } from '../ports/outbox-relay.store';
import type { RelayLogger } from '../ports/relay-logger';
import type { CheckpointTracker } from '../stream/checkpoint.tracker';
import { stampSlotsBeforeRangeReads } from './missing-slots.stamper';

/**
 * Publishes every pending event from the collection (first start, or a lost stream position),
 * aggregate by aggregate, each in its order, page by page (a broker outage may hold the drain
 * longer than a cursor's idle timeout), each page reserved in the in-memory budget first.
 *
 * The stream is opened before the drain; a barrier in the checkpoint tracker keeps every
 * position of it from being saved until each drained event is settled, so a crash mid-drain
 * drains again instead of skipping what was not published.
 */
export class CollectionDrain {
  constructor(
    private readonly outbox: Pick<OutboxRelayStore, 'findPendingPage' | 'stampMissingSlots'>,
    private readonly engine: RelayEngine,
    private readonly batchSize: number,
    private readonly logger: RelayLogger,
  ) {}

  /** Rejects on a read error (the caller reopens and drains again). */
  async run(tracker: CheckpointTracker, active: () => boolean): Promise<number> {
    // A partition's pages see only slotted events: stamp the others first (the stream is open).
    await stampSlotsBeforeRangeReads(this.outbox, active);
    const barrier = tracker.track(undefined);
    let outstanding = 1;
    const settleOne = (): void => {
      if (--outstanding === 0) tracker.settle(barrier);
    };
    this.logger.log(
      'No usable stream position: publishing pending events from the outbox collection first.',
    );
    let after: OutboxEventRecord | undefined;
    let total = 0;
    while (active()) {
      const reservation = await this.engine.budget.reserve(this.batchSize);
      if (reservation.events === 0 || !active()) {
        this.engine.budget.settleReservation(reservation, 0, 0);
        return total;
      }
      const page = await this.engine.offerRead(reservation, async () => {
        const events = await this.outbox.findPendingPage(after, reservation.events);
        outstanding += events.length;
        return events.map((event) => ({ event, settle: settleOne }));
      });
      total += page.length;
      if (page.length < reservation.events) break;
      after = page[page.length - 1].event;
    }
    settleOne();
    if (total > 0) this.logger.log(`Drained ${total} pending events from the outbox collection.`);
    return total;
  }
}
