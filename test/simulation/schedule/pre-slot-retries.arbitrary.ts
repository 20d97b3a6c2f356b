import fc from 'fast-check';
import { preSlotDeploySchedules } from './pre-slot.arbitrary';
import type { Fault, Schedule } from './schedule.types';

/**
 * Events written before slots, pending across a layout switch, some of them waiting for a
 * retry (issue 35): `preSlotDeploySchedules` (a rolling deploy from one partition to 2-8 while
 * a writer of a version before slots shares aggregates with the current ones, the broker down
 * around the switch), with each topic refusing (unknown, unauthorized, or one partition with a
 * retriable error) for 0.5-5 s around the switch, so that aggregates with events without a slot
 * carry failure records when the partitions' terms start. Each partition's drain and its load
 * of the aggregates waiting for a retry must first stamp the missing slots, and a drain page
 * must bring an aggregate's older events without a slot before its later ones: (b) judges it.
 * After the switch, maybe a lost stream position (oplog rollover: the partition drains again,
 * while the writer of the old version may still write) and a crash (the partition's next term
 * loads its aggregates waiting for a retry).
 */
export const preSlotRetrySchedules: fc.Arbitrary<Schedule> = fc
  .record({
    deploy: preSlotDeploySchedules(),
    refusals: fc.array(
      fc.record({
        kind: fc.constantFrom(
          'kafka-topic-unauthorized',
          'kafka-topic-missing',
          'kafka-partition-retriable',
        ),
        offsetMs: fc.integer({ min: -3_000, max: 1_000 }),
        durationMs: fc.integer({ min: 500, max: 5_000 }),
        partition: fc.nat({ max: 2 }),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    /** After the switch: a lost stream position (the drain runs again) and a crash (a new term). */
    afterMs: fc.integer({ min: 500, max: 6_000 }),
    rollover: fc.option(
      fc.record({
        duration: fc.integer({ min: 1_000, max: 8_000 }),
        param: fc.integer({ min: 100, max: 3_000 }),
      }),
    ),
    crash: fc.option(
      fc.record({ target: fc.nat({ max: 2 }), restartMs: fc.integer({ min: 0, max: 3_000 }) }),
    ),
  })
  .map(({ deploy, refusals, afterMs, rollover, crash }) => {
    const switchAt = Math.min(
      ...deploy.faults.filter((fault) => fault.kind === 'leave').map((fault) => fault.at),
    );
    const refused: Fault[] = refusals.map((refusal, index) => ({
      kind: refusal.kind,
      at: Math.max(0, switchAt + refusal.offsetMs),
      duration: refusal.durationMs,
      target: index % deploy.world.topics.length,
      param: refusal.partition,
    }));
    const switched = Math.max(
      ...deploy.faults.map((fault) => (fault.kind === 'leave' ? fault.at : 0)),
    );
    const after: Fault[] = [];
    if (rollover)
      after.push({ kind: 'oplog-rollover', at: switched + afterMs, target: 0, ...rollover });
    if (crash) {
      const { target, restartMs } = crash;
      after.push({
        kind: 'crash',
        at: switched + afterMs / 2,
        duration: restartMs,
        target,
        param: 0,
      });
    }
    return { ...deploy, faults: [...deploy.faults, ...refused, ...after] };
  });
