import fc from 'fast-check';
import { faultOf, normalize, scheduleArbitrary } from './schedule.arbitrary';
import { ACTIVE_PHASE_MS } from './schedule.types';
import type { Fault, Schedule } from './schedule.types';

/**
 * Partitions added to a topic, then a short authorization error on it (an ACL change of the
 * same operation): the publisher reads a topic's partition count again only after a topic error
 * or after 5 minutes (`KafkaPublisher`, `METADATA_TTL_MS`), which no run lasts; an error kafkajs
 * does not refresh its metadata after (not retriable) makes it learn the new count while the
 * producer's metadata, kept up to 300 s, still has the old one.
 */
const partitionGrowth: fc.Arbitrary<Fault[]> = fc
  .record({
    growth: faultOf(['kafka-partitions-added']),
    unauthorizedMs: fc.integer({ min: 200, max: 2_000 }),
  })
  .map(({ growth, unauthorizedMs }) => [
    growth,
    {
      kind: 'kafka-topic-unauthorized',
      at: growth.at + growth.duration,
      duration: unauthorizedMs,
      target: growth.target,
      param: 0,
    },
  ]);

/**
 * A window of ambiguous acknowledgements on one partition, longer than the base schedules'
 * (2-12 s): a send fails only when kafkajs' retries, answered as duplicates, time out too.
 */
const ambiguousAcks: fc.Arbitrary<Fault> = fc.record({
  kind: fc.constant('kafka-ambiguous-ack' as const),
  at: fc.integer({ min: 0, max: ACTIVE_PHASE_MS }),
  duration: fc.integer({ min: 2_000, max: 12_000 }),
  target: fc.integer({ min: 0, max: 40 }),
  param: fc.integer({ min: 0, max: 3 }),
});

/**
 * The idempotent family (`--idempotent`): the single-lease schedules (`scheduleArbitrary`, light
 * and load, their faults kept) run with `relay.kafka.idempotent`, plus 2-4 windows of ambiguous
 * acknowledgements (appended, then REQUEST_TIMED_OUT: the failures after which the client's
 * sequences and the broker's disagree) and, in half of them, partitions added to a topic
 * (`partitionGrowth`).
 */
export const idempotentScheduleArbitrary: fc.Arbitrary<Schedule> = fc
  .record({
    base: scheduleArbitrary,
    ambiguous: fc.array(ambiguousAcks, { minLength: 2, maxLength: 4 }),
    growth: fc.option(partitionGrowth, { freq: 2, nil: [] }),
  })
  .map(({ base, ambiguous, growth }) =>
    normalize({
      ...base,
      options: { ...base.options, idempotent: true },
      faults: [...base.faults, ...ambiguous, ...growth],
    }),
  );
