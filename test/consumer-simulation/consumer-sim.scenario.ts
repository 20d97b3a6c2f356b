import fc from 'fast-check';
import type { DeadLetterReason } from '../../lib/documents/consumer-dead-letter.document';

/**
 * What the handler (or a pipe in front of it) does on one counted try of an event: works,
 * throws, throws `UnrecoverableEventError`, hangs past `handlerTimeoutMs`, or (a pipe, guard or
 * interceptor) rejects the delivery before the handler runs.
 */
export type Behaviour = 'ok' | 'throw' | 'unrecoverable' | 'hang' | 'reject';

/** What is wrong with a message before any handler runs (`ok`: nothing). */
export type InputKind =
  | 'ok'
  | 'bad-json'
  | 'no-id'
  | 'dto-invalid'
  | 'dto-throws-in-transform'
  | 'dto-throws-in-validate'
  | 'validate-rejects'
  | 'validate-throws';

export type FaultKind =
  | 'store-down' // the failure / dead-letter store refuses its next `count` writes
  | 'processed-down' // the processed-events insert fails `count` times
  | 'commit-fails' // the handler's transaction fails to commit (transient)
  | 'commit-ambiguous' // it commits, but the reply is lost
  | 'handler-db-down' // the handler's own database calls fail
  | 'heartbeat-fails' // a rebalance between attempts
  | 'topic-down' // the dead-letter topic is unreachable for `count` copies
  | 'topic-gone' // the dead-letter topic never comes back
  | 'restart' // the consumer restarts from its committed offsets
  | 'crash-in-batch' // the process dies inside a batch, before its commit (`count` batches)
  | 'crash-after-commit'; // it dies after a batch committed, before its offsets did

export interface SimEventSpec {
  /** Its aggregate (the Kafka key; so its partition). */
  aggregate: number;
  input: InputKind;
  /**
   * Its behaviour on each counted try (rejections first: a pipe only runs at the start of a
   * delivery); past the end, the last one again.
   */
  script: Behaviour[];
  /** Published twice by the relay (at-least-once). */
  duplicated: boolean;
}

export interface Scenario {
  /** Seeds the scheduler's choice of the next partition. */
  seed: number;
  partitions: number;
  maxFailures: number;
  deadLetterTopic: boolean;
  /** Offsets are committed after this many messages (a restart replays the rest). */
  commitEvery: number;
  /**
   * `consumer.batch.maxEvents`: up to this many consecutive messages of a partition are applied
   * in one transaction, as `OutboxKafkaServer` does with a kafkajs fetch (1: one at a time).
   */
  batchMaxEvents: number;
  /**
   * Crashes of the first batches (besides the `crash-*` faults, which may fire when no batch
   * runs): inside a batch, before its commit; between a batch's commit and its offsets.
   */
  batchCrashes: { inBatch: number; afterCommit: number };
  events: SimEventSpec[];
  faults: Array<{ atDelivery: number; kind: FaultKind; count: number }>;
}

const behaviour = fc.constantFrom<Behaviour>('throw', 'throw', 'hang', 'unrecoverable');

const eventSpec: fc.Arbitrary<SimEventSpec> = fc.record({
  aggregate: fc.integer({ min: 0, max: 5 }),
  input: fc.oneof(
    { weight: 20, arbitrary: fc.constant<InputKind>('ok') },
    {
      weight: 4,
      arbitrary: fc.constantFrom<InputKind>(
        'bad-json',
        'no-id',
        'dto-invalid',
        'dto-throws-in-transform',
        'dto-throws-in-validate',
        'validate-rejects',
        'validate-throws',
      ),
    },
  ),
  // A pipe only runs at the start of a delivery: its rejections come before the handler's tries.
  // Clean events (applied at the first try) are frequent, so that batches of them commit.
  script: fc.oneof(
    { weight: 3, arbitrary: fc.constant<Behaviour[]>(['ok']) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.integer({ min: 0, max: 5 }),
          fc.array(behaviour, { maxLength: 5 }),
          fc.constantFrom<Behaviour>('ok', 'ok', 'throw', 'reject'),
        )
        .map(([rejects, tries, last]): Behaviour[] =>
          last === 'reject'
            ? Array<Behaviour>(rejects + 1).fill('reject')
            : [...Array<Behaviour>(rejects).fill('reject'), ...tries, last],
        ),
    },
  ),
  duplicated: fc.oneof(
    { weight: 3, arbitrary: fc.constant(false) },
    { weight: 1, arbitrary: fc.constant(true) },
  ),
});

const faultKind = fc.constantFrom<FaultKind>(
  'store-down',
  'processed-down',
  'commit-fails',
  'commit-ambiguous',
  'handler-db-down',
  'heartbeat-fails',
  'topic-down',
  'topic-gone',
  'restart',
  'crash-in-batch',
  'crash-after-commit',
);

export const scenarioArbitrary: fc.Arbitrary<Scenario> = fc.record({
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  partitions: fc.integer({ min: 1, max: 3 }),
  maxFailures: fc.integer({ min: 1, max: 4 }),
  deadLetterTopic: fc.boolean(),
  commitEvery: fc.integer({ min: 1, max: 4 }),
  batchMaxEvents: fc.constantFrom(1, 2, 3, 5, 12),
  batchCrashes: fc.record({
    inBatch: fc.integer({ min: 0, max: 2 }),
    afterCommit: fc.integer({ min: 0, max: 2 }),
  }),
  events: fc.array(eventSpec, { minLength: 1, maxLength: 12 }),
  faults: fc.array(
    fc.record({
      atDelivery: fc.integer({ min: 1, max: 80 }),
      kind: faultKind,
      // A few failed calls, or a long outage (dozens of refused calls, minutes of paused partitions).
      count: fc.oneof(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 20, max: 60 })),
    }),
    { maxLength: 6 },
  ),
});

const INPUT_REASON: Record<Exclude<InputKind, 'ok'>, DeadLetterReason> = {
  'bad-json': 'invalid-json',
  'no-id': 'missing-event-id',
  'dto-invalid': 'invalid-payload',
  'dto-throws-in-transform': 'invalid-payload',
  'dto-throws-in-validate': 'invalid-payload',
  'validate-rejects': 'invalid-payload',
  'validate-throws': 'invalid-payload',
};

/**
 * How an event must end, from its input and script alone (whatever faults happen): applied,
 * or dead-lettered for a reason, with the behaviour it keeps on later deliveries.
 */
export function expectedEnding(
  event: SimEventSpec,
  maxFailures: number,
):
  | { kind: 'applied' }
  | { kind: 'dead-lettered'; reason: DeadLetterReason; behaviour: Behaviour; attempts: number } {
  if (event.input !== 'ok') {
    return {
      kind: 'dead-lettered',
      reason: INPUT_REASON[event.input],
      behaviour: 'ok',
      attempts: 0,
    };
  }
  for (let tried = 0; ; tried++) {
    const now = event.script[Math.min(tried, event.script.length - 1)];
    if (now === 'ok') return { kind: 'applied' };
    if (now === 'unrecoverable') {
      return {
        kind: 'dead-lettered',
        reason: 'unrecoverable',
        behaviour: now,
        attempts: tried + 1,
      };
    }
    if (tried + 1 >= maxFailures) {
      return { kind: 'dead-lettered', reason: 'max-failures', behaviour: now, attempts: tried + 1 };
    }
  }
}
