import fc from 'fast-check';
import { normalize, scheduleArbitrary } from './schedule.arbitrary';
import { rollingDeploy, withPartitions } from './partitioned.arbitrary';
import type { Fault, Schedule } from './schedule.types';

/**
 * Rolling deploys from one partition to N while a writer of a version before slots still runs:
 * it shares aggregates with the current writers (with `aggregateSequence` their ids are common
 * and sequence order is commit order), or is upgraded itself around the switch (then its own
 * aggregates get events of both versions, also without `aggregateSequence`); the broker is
 * down around the switch (events of both versions are pending across it), and the relays roll
 * over from 1 to `partitions` (default: 2 to 8) one after the other. An aggregate's events
 * written without a slot must still go out before its later ones, whichever partition owns it.
 */
export function preSlotDeploySchedules(partitions?: number): fc.Arbitrary<Schedule> {
  return fc
    .record({
      base: scheduleArbitrary,
      partitions:
        partitions === undefined ? fc.constantFrom(2, 3, 4, 6, 8) : fc.constant(partitions),
      skews: fc.array(fc.integer({ min: -2_000, max: 2_000 }), { minLength: 2, maxLength: 3 }),
      writerSkews: fc.array(fc.integer({ min: -500, max: 500 }), { minLength: 2, maxLength: 3 }),
      preSlotWriter: fc.nat({ max: 2 }),
      shared: fc.boolean(),
      upgradedAfterSwitchMs: fc.option(fc.integer({ min: -3_000, max: 6_000 })),
      switchAt: fc.integer({ min: 1_000, max: 12_000 }),
      gapMs: fc.integer({ min: 100, max: 3_000 }),
      outage: fc.record({
        before: fc.integer({ min: 0, max: 4_000 }),
        duration: fc.integer({ min: 500, max: 8_000 }),
      }),
    })
    .map((raw) => {
      const { base, partitions: to, skews, writerSkews, preSlotWriter, switchAt, gapMs } = raw;
      const { outage, shared, upgradedAfterSwitchMs: upgraded } = raw;
      const outageFault: Fault = {
        kind: 'broker-outage',
        at: Math.max(0, switchAt - outage.before),
        duration: outage.duration,
        target: 0,
        param: 0,
      };
      const faults = [
        ...base.faults.slice(0, 2),
        outageFault,
        ...rollingDeploy(skews.length, switchAt, gapMs, to),
      ];
      const world = {
        ...base.world,
        writers: writerSkews.length,
        writerSkewsMs: writerSkews,
        // Without a writer's upgrade, only shared aggregates mix both versions.
        aggregateSequence: shared || upgraded === null,
        unslottedWriters: [preSlotWriter % writerSkews.length],
        ...(upgraded === null ? {} : { unslottedUntilMs: Math.max(0, switchAt + upgraded) }),
      };
      const deploy = withPartitions({ ...base, world, relays: { skewsMs: skews }, faults }, to);
      return normalize({ ...deploy, options: { ...deploy.options, partitions: 1 } });
    });
}
