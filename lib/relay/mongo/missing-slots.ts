import type { mongo } from 'mongoose';
import type { OutboxDoc } from '../../documents/outbox-event.document';
import { eventSlot } from '../../events/event-slot';

/**
 * Stamps `slot` on up to `limit` events that still need a relay (pending, or dead-marked and
 * not yet moved) and were written without one (by a version before slots); returns how many
 * it found (each has its slot now, by this call or a concurrent one). Idempotent: the slot is
 * a function of the document, and the update applies only where it is missing, so relays of
 * any partition (or fenced off) may run it at once; it races harmlessly with the relay's own
 * writes (by `_id`, on other fields).
 *
 * The pending ones are found by the partitions' index `outbox_relay_slot_order` (partial on
 * `pending`, slot first; a missing slot is indexed as null), the dead-marked ones by
 * `outbox_relay_pending` (status first): neither read scans the whole backlog.
 */
export async function stampMissingSlots(
  outbox: mongo.Collection<OutboxDoc>,
  limit: number,
): Promise<number> {
  const projection = { projection: { aggregateType: 1, aggregateId: 1 } };
  const docs = await outbox
    .find({ status: 'pending', slot: null } as unknown as mongo.Filter<OutboxDoc>, projection)
    .limit(limit)
    .toArray();
  if (docs.length < limit) {
    const dead = await outbox
      .find({ status: 'dead', slot: { $exists: false } }, projection)
      .limit(limit - docs.length)
      .toArray();
    docs.push(...dead);
  }
  if (docs.length === 0) return 0;
  await outbox.bulkWrite(
    docs.map((doc) => ({
      updateOne: {
        filter: { _id: doc._id, slot: { $exists: false } },
        update: { $set: { slot: eventSlot(doc.aggregateType, doc.aggregateId) } },
      },
    })),
    { ordered: false },
  );
  return docs.length;
}
