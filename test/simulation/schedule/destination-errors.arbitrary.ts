import fc from 'fast-check';
import { normalize, scheduleArbitrary } from './schedule.arbitrary';
import type { Fault, Schedule, SimRelayOptionsData, SimTransactionData } from './schedule.types';

/**
 * Destination errors (issue 35): single lease, one relay, only faults that hit one destination
 * or event, so isolation (f) judges every run. Each transaction's events are of one aggregate,
 * and meanwhile:
 * - topic 0 refuses (unknown, unauthorized) or one of its partitions refuses with a retriable
 *   error, for 3-8 s: its aggregates wait for their retry while the stream brings them more;
 * - 1-4 poison events, each the first of one of topic 0's transactions (the broker refuses that
 *   record alone): the publisher resends the batch one by one, and the rest of the aggregate
 *   must wait behind it.
 * Each run aims at one moment (`AIMS`): a refusal while the other topic is quiet (2 runs in 5),
 * or bursts of large events against a small byte bound (3 in 5).
 * (f) fails when the other destinations wait too, (b) when an aggregate's later event overtakes
 * a waiting one, (d) when more than the bound is held.
 */

/** What a run's load and options look like, by the moment it aims at. */
interface Aim {
  /** Topics (topic 0 refuses), aggregates per topic. */
  topics: { min: number; max: number };
  aggregates: { min: number; max: number };
  /** Transactions, their events (all of one aggregate and topic), the gap between them. */
  count: { min: number; max: number };
  eventsPerTx: { min: number; max: number };
  gapMs: { min: number; max: number };
  payloadBytes: { min: number; max: number };
  batchSize: { min: number; max: number };
  /** `maxInFlightBytes` in events of the largest size; `maxBatchBytes` at most `batchEvents`. */
  heldEvents: { min: number; max: number };
  batchEvents: number;
  /** How topic 0 refuses. */
  refusals: readonly RefusalKind[];
  /** Its share of the runs. */
  weight: number;
  /** Overrides of the base schedule's options. */
  options: (options: SimRelayOptionsData) => Partial<SimRelayOptionsData>;
}

type RefusalKind = 'kafka-topic-unauthorized' | 'kafka-topic-missing' | 'kafka-partition-retriable';

const AIMS: Readonly<Record<string, Aim>> = {
  /**
   * A topic refusing while the other is quiet: small events every 1-1.5 s, short initial
   * backoffs and longer maximal ones. A refusal taken for the broker's (every destination
   * paused) is retried alone, each pause twice as long, until the other topic's events arrive
   * in a pause longer than the isolation bound. (Busy other topics reset the pause at every
   * send they get accepted: it never outlasts the bound.)
   */
  quiet: {
    // One other topic, so that its events come seconds apart; few aggregates, so that topic 0's
    // events come for the one waiting.
    topics: { min: 2, max: 2 },
    aggregates: { min: 1, max: 2 },
    count: { min: 8, max: 14 },
    eventsPerTx: { min: 2, max: 4 },
    gapMs: { min: 1_000, max: 1_500 },
    payloadBytes: { min: 200, max: 600 },
    batchSize: { min: 4, max: 10 },
    heldEvents: { min: 20, max: 40 },
    batchEvents: 10,
    // The whole topic: a partition's refusal lets its topic's other partitions reset the pause.
    refusals: ['kafka-topic-unauthorized', 'kafka-topic-missing'],
    weight: 2,
    options: ({ backoff }) => ({
      idleMs: 20,
      maxAttempts: 6,
      backoff: { ...backoff, initialMs: 20 + (backoff.initialMs % 80), maxMs: 4_000 },
    }),
  },
  /** Bursts of large events: the bytes reach `maxInFlightBytes` long before the count bound. */
  bytes: {
    topics: { min: 2, max: 3 },
    aggregates: { min: 2, max: 3 },
    count: { min: 10, max: 25 },
    eventsPerTx: { min: 2, max: 6 },
    gapMs: { min: 5, max: 100 },
    payloadBytes: { min: 1_000, max: 3_000 },
    batchSize: { min: 2, max: 4 },
    heldEvents: { min: 2, max: 4 },
    batchEvents: 3,
    refusals: ['kafka-topic-unauthorized', 'kafka-topic-missing', 'kafka-partition-retriable'],
    weight: 3,
    options: () => ({ maxAttempts: 6 }),
  },
};

const range = ({ min, max }: { min: number; max: number }) => fc.integer({ min, max });

const aimArbitrary = fc.oneof(
  ...Object.entries(AIMS).map(([name, { weight }]) => ({ arbitrary: fc.constant(name), weight })),
);

const destinationArbitrary = aimArbitrary.chain((aim) =>
  fc.record({
    aim: fc.constant(aim),
    base: scheduleArbitrary,
    topics: range(AIMS[aim].topics),
    aggregates: range(AIMS[aim].aggregates),
    count: range(AIMS[aim].count),
    startMs: fc.integer({ min: 0, max: 3_000 }),
    gapMs: range(AIMS[aim].gapMs),
    eventsPerTx: range(AIMS[aim].eventsPerTx),
    payloadBytes: range(AIMS[aim].payloadBytes),
    heldEvents: range(AIMS[aim].heldEvents),
    maxInFlight: fc.integer({ min: 30, max: 80 }),
    batchSize: range(AIMS[aim].batchSize),
    refusal: fc.record({
      kind: fc.constantFrom(...AIMS[aim].refusals),
      offsetMs: fc.integer({ min: 0, max: 3_000 }),
      durationMs: fc.integer({ min: 3_000, max: 8_000 }),
      partition: fc.nat({ max: 2 }),
    }),
    poison: fc.array(
      fc.record({ tx: fc.nat({ max: 59 }), durationMs: fc.integer({ min: 300, max: 6_000 }) }),
      { minLength: 1, maxLength: 4 },
    ),
  }),
);

type Raw = typeof destinationArbitrary extends fc.Arbitrary<infer T> ? T : never;

function load(raw: Raw, writers: number): SimTransactionData[] {
  return Array.from({ length: raw.count }, (_, index) => ({
    at: raw.startMs + index * raw.gapMs,
    writer: index % writers,
    durationMs: 5,
    events: Array.from({ length: raw.eventsPerTx }, (_, event) => ({
      type: index % raw.topics,
      aggregate: Math.floor(index / raw.topics) % raw.aggregates,
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
  // On the refused topic's transactions: a poison event disturbs its whole topic as far as (f)
  // is concerned, and the other topics must stay judged.
  const onTopic0 = Math.ceil(raw.count / raw.topics);
  for (const poison of raw.poison) {
    const tx = (poison.tx % onTopic0) * raw.topics;
    list.push({
      kind: 'kafka-poison-event',
      at: raw.startMs + tx * raw.gapMs,
      duration: poison.durationMs,
      target: tx,
      param: 0, // its transaction's first event: the later ones of its aggregate wait behind it
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
      maxBatchBytes: Math.max(1_024, Math.min(raw.heldEvents, AIMS[raw.aim].batchEvents) * largest),
      ...AIMS[raw.aim].options(base.options),
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
