import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { aggregateKey, inAggregateOrder } from '../../documents/outbox-event.document';
import { groupBy } from '../../common/group-by';

/**
 * A partition's drain page from one read of its slot range plus every pending event without a
 * slot (a writer of a version before slots; `slot: null` sorts first): the first `limit`
 * events with a slot, and before each one the events without a slot of its aggregate that come
 * earlier in aggregate order (`AGGREGATE_ORDER`). The other events without a slot (of other
 * partitions, or later than the page's events of their aggregate) are left out: the drain
 * stamped the slots of every event written before its stream's position, so those came after
 * it, and reach the partition by its stream (or a later page), in commit order with the rest.
 *
 * One read, not two: between a read of the slot range and a read of the events without a slot,
 * a concurrent stamp (another partition's drain, partition 0's backfill) could move an event
 * from the second to the first, and neither would see it while a later event of its aggregate
 * is in the page. The page's last event has a slot: the next page starts after it.
 */
export function withOlderUnslotted(
  read: readonly OutboxEventRecord[],
  limit: number,
): OutboxEventRecord[] {
  const slotted = read.filter(hasSlot).slice(0, limit);
  const unslotted = read.filter((event) => !hasSlot(event));
  if (unslotted.length === 0) return slotted;
  const byAggregate = groupBy(unslotted, aggregateKey);
  const page: OutboxEventRecord[] = [];
  for (const event of slotted) {
    const older = byAggregate.get(aggregateKey(event));
    while (older && older.length > 0 && inAggregateOrder(older[0], event) < 0) {
      page.push(older[0]);
      older.shift();
    }
    page.push(event);
  }
  return page;
}

function hasSlot(event: OutboxEventRecord): boolean {
  return event.slot !== undefined && event.slot !== null;
}
