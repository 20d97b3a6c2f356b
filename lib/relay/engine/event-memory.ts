/**
 * What an event costs in memory while the relay holds it, from its size on the wire (the
 * publisher's `sizeOf`: key, value and headers of its message). Held, an event is in memory as
 * its decoded document (the driver's objects: strings, an ObjectId, a Date, the payload object,
 * the headers), as the message built from it once (key, the payload as JSON, CloudEvents headers,
 * its partitioned copy while in a send), and as the relay's bookkeeping (its lane item and entries
 * in its aggregate's queue and id map, a settle callback, its share of the lane). The in-flight
 * budget (`maxInFlightBytes`) charges this estimate, so that it bounds memory, not wire bytes.
 *
 * Measured with `RELAY_BENCH_PARTS=event-memory npm run bench -- relay` (Node 20, bench/
 * relay-event-memory.bench.ts): 20 000 events decoded from BSON, offered to a real `RelayEngine`
 * over a `KafkaPublisher` whose sends never answer (4 batches of 500 in a send, the rest queued),
 * V8 heap used plus memory outside it after a full GC, per event, against the process before the
 * events were decoded:
 *
 * | wire bytes | in memory (1 000 aggregates) | each event of its own aggregate |
 * | --- | --- | --- |
 * | 377 | 2 198 | 2 819 |
 * | 1 387 | 5 448 | |
 * | 4 387 | 9 796 | |
 * | 16 387 | 33 765 | |
 *
 * The least-squares line through the first column is 1 864 + 1.94 x wire bytes: the payload is
 * in memory twice (the decoded object, the JSON value of the message); the rest is per event
 * whatever its size (an event of its own aggregate adds a lane: 620 more). So: a fixed part a
 * little above the worst case measured, and twice the wire bytes; the estimate is within 2 % below
 * to 51 % above every row (tightest at 1.4 kB, loosest for small events of shared aggregates).
 */
export const EVENT_FIXED_BYTES = 2_560;

/** Bytes in memory per byte on the wire (see `EVENT_FIXED_BYTES`). */
export const EVENT_WIRE_FACTOR = 2;

/** The memory an event held by the relay is charged (`maxInFlightBytes`), from its wire size. */
export function eventMemoryBytes(wireBytes: number): number {
  return EVENT_FIXED_BYTES + EVENT_WIRE_FACTOR * wireBytes;
}
