import type { OutboxRelayStore } from '../ports/outbox-relay.store';

/** Events stamped per round trip. */
const ROUND = 1000;

/**
 * A partition reads from the collection only the events whose `slot` lies in its range; an
 * event written by a version before slots has none, and its aggregate may have later events
 * that do. So before a partition reads what came before its stream's position (the drain, the
 * aggregates marked for a retry at the start of a term), every pending event without a slot is
 * stamped (whichever partition it belongs to: the slot is a function of the document), until
 * none is left. Those reads then see all of the partition's older events, each aggregate's in
 * its order; what is inserted without a slot afterwards comes on the partition's stream
 * (`ChangeSource`), in commit order with the rest, and a drain page that holds a later event of
 * its aggregate holds it too, before that one (`withOlderUnslotted`: the drain reads events
 * after the stream's position as well). No-op on a store without a range. Rejects on a write
 * error (the caller retries, as after a failed read).
 */
export async function stampSlotsBeforeRangeReads(
  outbox: Pick<OutboxRelayStore, 'stampMissingSlots'>,
  active: () => boolean,
): Promise<number> {
  if (!outbox.stampMissingSlots) return 0;
  let total = 0;
  while (active()) {
    const found = await outbox.stampMissingSlots(ROUND);
    total += found;
    if (found < ROUND) break;
  }
  return total;
}
