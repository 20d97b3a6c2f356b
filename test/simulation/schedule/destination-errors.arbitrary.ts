import fc from 'fast-check';
import { normalize, scheduleArbitrary } from './schedule.arbitrary';
import type { Fault, Schedule, SimTransactionData } from './schedule.types';

/**
 * Destination errors while the other destinations are busy (issue 35): single lease, one relay,
 * only faults that hit one destination or event, so isolation (f) judges every run. 2-3 topics
 * get a steady load of 25-50 transactions of 1-2 events over few aggregates (each aggregate has
 * events queued behind each other), events of 0.2-3 kB against `maxInFlightBytes` of 2-5
 * events' worth and `maxInFlight` of 30-80 (byte-heavy: the byte bound bites long before the
 * count), and meanwhile:
 * - topic 0 refuses (unknown, unauthorized) or one of its partitions refuses with a retriable
 *   error, for 2-6 s: its aggregates wait for their retry while the stream brings them more;
 * - 1-4 poison events (the broker refuses that record alone): the publisher resends the batch
 *   one by one, and the rest of a failed aggregate must wait behind it.
 * (f) fails when the other destinations wait too, (b) when an aggregate's later event overtakes
 * a waiting one, (d) when more than the bound is held.
 */
const destinationArbitrary = fc.record({
  base: scheduleArbitrary,
  topics: fc.integer({ min: 2, max: 3 }),
  aggregates: fc.integer({ min: 2, max: 3 }),
  count: fc.integer({ min: 25, max: 50 }),
  startMs: fc.integer({ min: 0, max: 3_000 }),
  gapMs: fc.integer({ min: 5, max: 100 }),
  eventsPerTx: fc.integer({ min: 1, max: 2 }),
  payloadBytes: fc.integer({ min: 200, max: 3_000 }),
  /** `maxInFlightBytes` in events of the largest size. */
  heldEvents: fc.integer({ min: 2, max: 5 }),
  maxInFlight: fc.integer({ min: 30, max: 80 }),
  batchSize: fc.integer({ min: 2, max: 6 }),
  refusal: fc.record({
    kind: fc.constantFrom(
      'kafka-topic-unauthorized',
      'kafka-topic-missing',
      'kafka-partition-retriable',
    ),
    offsetMs: fc.integer({ min: 0, max: 3_000 }),
    durationMs: fc.integer({ min: 2_000, max: 6_000 }),
    partition: fc.nat({ max: 2 }),
  }),
  poison: fc.array(
    fc.record({ tx: fc.nat({ max: 49 }), durationMs: fc.integer({ min: 300, max: 6_000 }) }),
    { minLength: 1, maxLength: 4 },
  ),
});

type Raw = typeof destinationArbitrary extends fc.Arbitrary<infer T> ? T : never;

function load(raw: Raw, writers: number): SimTransactionData[] {
  return Array.from({ length: raw.count }, (_, index) => ({
    at: raw.startMs + index * raw.gapMs,
    writer: index % writers,
    durationMs: 5,
    events: Array.from({ length: raw.eventsPerTx }, (_, event) => ({
      type: (index + event) % raw.topics,
      aggregate: (index * 7 + event) % raw.aggregates,
      payloadBytes: Math.round(raw.payloadBytes * (0.8 + (((index + event) * 37) % 20) / 100)),
    })),
  }));
}

function faults(raw: Raw): Fault[] {
  const { refusal } = raw;
  const list: Fault[] = [
    {
      kind: refusal.kind,
      at: raw.startMs + refusal.offsetMs,
      duration: refusal.durationMs,
      target: 0,
      param: refusal.partition,
    },
  ];
  for (const poison of raw.poison) {
    const tx = poison.tx % raw.count;
    list.push({
      kind: 'kafka-poison-event',
      at: raw.startMs + tx * raw.gapMs,
      duration: poison.durationMs,
      target: tx,
      param: tx,
    });
  }
  return list;
}

export const destinationErrorSchedules: fc.Arbitrary<Schedule> = destinationArbitrary.map((raw) => {
  const { base } = raw;
  const largest = raw.payloadBytes + 300;
  const topics = Array.from({ length: raw.topics }, (_, index) => ({
    type: ['Order', 'Invoice', 'Shipment'][index],
    partitions: 2 + (index % 2),
  }));
  return normalize({
    ...base,
    options: {
      ...base.options,
      batchSize: raw.batchSize,
      maxInFlight: Math.max(raw.maxInFlight, raw.batchSize),
      maxInFlightBytes: Math.max(2_048, raw.heldEvents * largest),
      maxBatchBytes: Math.max(1_024, Math.round((raw.heldEvents * largest) / 2)),
    },
    world: {
      ...base.world,
      topics,
      aggregatesPerType: raw.aggregates,
      messageMaxBytes: Math.max(base.world.messageMaxBytes, 2 * largest),
    },
    relays: { skewsMs: [0] },
    transactions: load(raw, base.world.writers),
    faults: faults(raw),
  });
});
