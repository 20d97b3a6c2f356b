import { eventSlot, SLOT_COUNT } from '../../events/event-slot';

/** Slots `from` (inclusive) to `to` (exclusive): what one relay partition covers. */
export interface SlotRange {
  from: number;
  to: number;
}

/**
 * Partition `partition` of `partitions` covers a contiguous range of slots, so a partition's
 * events are one index range (`slot >= from && slot < to`) and every layout covers every slot
 * exactly once.
 */
export function slotsOfPartition(partition: number, partitions: number): SlotRange {
  return {
    from: Math.ceil((partition * SLOT_COUNT) / partitions),
    to: Math.ceil(((partition + 1) * SLOT_COUNT) / partitions),
  };
}

/** The partition of `partitions` whose range holds `slot`. */
export function partitionOfSlot(slot: number, partitions: number): number {
  return Math.floor((slot * partitions) / SLOT_COUNT);
}

/**
 * Whether `event` belongs to the partition of `range`: by its stored `slot`, or, for an event
 * written by a version before slots (no `slot`), by its aggregate's (`eventSlot`), which is
 * what the slot would have been.
 */
export function inSlotRange(
  range: SlotRange,
  event: { slot?: number; aggregateType: string; aggregateId: string },
): boolean {
  const slot = event.slot ?? eventSlot(event.aggregateType, event.aggregateId);
  return slot >= range.from && slot < range.to;
}
