import type { RelayEngine } from '../engine/relay.engine';
import type { OutboxRelayStore } from '../ports/outbox-relay.store';
import { stampSlotsBeforeRangeReads } from './missing-slots.stamper';
import { forEachRetryingAggregate } from './retrying-aggregates.pages';

/**
 * At the start of a term: every aggregate with a marked pending event (a failure waiting for
 * its retry, or events held back behind one) is read page by page and held in the engine, so
 * the stream cannot publish a newer event of it before the older ones. A partition first
 * stamps the slots missing on events written before slots (`stampSlotsBeforeRangeReads`), so
 * that it finds the marked ones among them. Returns how many.
 */
export async function loadRetryingAggregates(
  outbox: Pick<OutboxRelayStore, 'findRetryingAggregates' | 'stampMissingSlots'>,
  engine: RelayEngine,
  active: () => boolean,
): Promise<number> {
  await stampSlotsBeforeRangeReads(outbox, active);
  return forEachRetryingAggregate(outbox, active, (aggregate) =>
    engine.holdUntil(aggregate, aggregate.retryAt),
  );
}
