import type { SlotRange } from '../ports/partition-layout';

/**
 * A partition's slots as a query: `field` in `[from, to)`, one range of the `slot` index
 * (`partition-layout.ts`). `field` is `fullDocument.slot` in a change stream's `$match`.
 */
export function slotsIn(range: SlotRange, field = 'slot'): Record<string, unknown> {
  return { [field]: { $gte: range.from, $lt: range.to } };
}

/**
 * What a partition's change stream takes: inserts whose document's slot is in `range`, and
 * inserts without a slot (a writer of a version before slots, during a rolling deploy), which
 * come to every partition; each keeps those of its own aggregates (`inSlotRange`: the slot is
 * a hash the server cannot compute). An `$or` of a change stream's `$match` stage
 * (https://www.mongodb.com/docs/manual/changeStreams/#modify-change-stream-output).
 */
export function streamedToPartition(range: SlotRange): Array<Record<string, unknown>> {
  return [slotsIn(range, 'fullDocument.slot'), { 'fullDocument.slot': { $exists: false } }];
}
