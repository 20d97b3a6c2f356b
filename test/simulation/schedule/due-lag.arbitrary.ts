import fc from 'fast-check';
import { normalize, scheduleArbitrary } from './schedule.arbitrary';
import type { Fault, Schedule, SimTransactionData } from './schedule.types';

/**
 * A cancellation still replicating when the next scheduled event of its aggregate comes due
 * (issue 35, `due-by-extrapolated`): one relay, one topic of one partition, and one aggregate
 * with 2-3 events scheduled for the same due time, then one more due 200-350 ms later that a
 * second transaction cancels 2-15 ms before it is due, while:
 * - the broker acknowledges slowly (250-450 ms) and `batchSize` is 1, so that the aggregate's
 *   catch-up reads go on, page by page, past the later due time;
 * - commits take 2-3 s to be majority-committed (from after the first transaction, and with no
 *   commit in between, so the due reader's pass at the first due time is answered at once): the
 *   cancellation is not in what a majority read sees for that long.
 * The catch-up reads take scheduled events due by the majority time the due reader read last,
 * which stays before the cancelled event's due time until a pass reads a later one, and such a
 * pass waits for the cancellation to be majority-committed. A reader that extrapolates that time
 * by the local time since takes the cancelled event in a read after its due time: (s3) fails.
 * (With the cancellation 60-140 ms after the first due time, some passes at that due time began
 * after it and waited for it: 60 of 100 runs failed with that mutation; as here, 100 of 100.)
 */
const dueLagArbitrary = fc.record({
  base: scheduleArbitrary,
  startMs: fc.integer({ min: 300, max: 1_500 }),
  delayMs: fc.integer({ min: 1_500, max: 4_000 }),
  sameDue: fc.integer({ min: 2, max: 3 }),
  laterMs: fc.integer({ min: 200, max: 350 }),
  cancelBeforeMs: fc.integer({ min: 2, max: 15 }),
  batchSize: fc.constant(1),
  ackMs: fc.integer({ min: 250, max: 450 }),
  lagMs: fc.integer({ min: 2_000, max: 3_000 }),
});

type Raw = typeof dueLagArbitrary extends fc.Arbitrary<infer T> ? T : never;

function transactions(raw: Raw): SimTransactionData[] {
  const due = raw.startMs + raw.delayMs;
  const cancelAt = due + raw.laterMs - raw.cancelBeforeMs - 1;
  return [
    {
      at: raw.startMs,
      writer: 0,
      durationMs: 1,
      events: [
        ...Array.from({ length: raw.sameDue }, (_, index) => ({
          type: 0,
          aggregate: 0,
          payloadBytes: 60 + index * 7,
          delayMs: raw.delayMs,
        })),
        { type: 0, aggregate: 0, payloadBytes: 99, delayMs: raw.delayMs + raw.laterMs },
      ],
    },
    {
      at: cancelAt,
      writer: 0,
      durationMs: 1,
      events: [],
      cancels: [{ tx: 0, event: raw.sameDue }],
    },
  ];
}

function faults(raw: Raw): Fault[] {
  const due = raw.startMs + raw.delayMs;
  const until = due + raw.laterMs + 4_000;
  return [
    { kind: 'slow-ack', at: due - 200, duration: until - due, target: 0, param: raw.ackMs },
    {
      kind: 'slow-majority',
      at: raw.startMs + 200,
      duration: until - raw.startMs,
      target: 0,
      param: raw.lagMs,
    },
  ];
}

export const dueLagSchedules: fc.Arbitrary<Schedule> = dueLagArbitrary.map((raw) => {
  const { base } = raw;
  return normalize({
    ...base,
    options: {
      ...base.options,
      batchSize: raw.batchSize,
      maxInFlight: raw.batchSize,
      sweepIntervalMs: 3_000,
    },
    world: {
      ...base.world,
      topics: [{ type: 'Order', partitions: 1 }],
      aggregatesPerType: 1,
      writers: 1,
      writerSkewsMs: [0],
    },
    relays: { skewsMs: [0] },
    transactions: transactions(raw),
    faults: faults(raw),
  });
});
