import fc from 'fast-check';
import { preSlotDeploySchedules } from './pre-slot.arbitrary';
import { faultOf, normalize, scheduleArbitrary } from './schedule.arbitrary';
import type { Fault, Schedule } from './schedule.types';

/** Faults that change who is alive: join, leave (graceful), die (crash), pause (GC). */
const CHURN = ['leave', 'crash', 'pause', 'extra-relay', 'crash-at-call'] as const;

/** Fits the options to `partitions` (each partition needs a batch of the in-flight budget). */
export function withPartitions(schedule: Schedule, partitions: number): Schedule {
  const { options } = schedule;
  return {
    ...schedule,
    options: {
      ...options,
      partitions,
      maxInFlight: Math.max(options.maxInFlight, partitions * options.batchSize),
      maxInFlightBytes: Math.max(options.maxInFlightBytes, partitions * options.maxBatchBytes),
    },
  };
}

/**
 * A rolling deploy that changes the layout: every relay leaves (graceful stop) one after the
 * other from `at`, and comes back with `to` partitions.
 */
export function rollingDeploy(relays: number, at: number, gapMs: number, to: number): Fault[] {
  return Array.from({ length: relays }, (_, index) => ({
    kind: 'leave' as const,
    at: at + index * gapMs,
    duration: 200,
    target: index,
    param: to,
  }));
}

/**
 * Partitioned schedules: mostly churn and layout switches (`churnSchedules`) on `base` (the
 * ordinary schedules, or those with scheduled events); one in five a rolling deploy from 1 to N
 * partitions with a writer of a version before slots sharing aggregates with the current ones
 * (`preSlotDeploySchedules`).
 */
export function partitionedSchedules(
  partitions?: number,
  base: fc.Arbitrary<Schedule> = scheduleArbitrary,
): fc.Arbitrary<Schedule> {
  return fc.oneof(
    { weight: 4, arbitrary: churnSchedules(partitions, base) },
    { weight: 1, arbitrary: preSlotDeploySchedules(partitions) },
  );
}

/**
 * The `base` schedules (options, world, transactions, faults), with `partitions` (default:
 * 2 to 8), 2-3 relays and up to 4 churn faults on top; one in four is a layout switch instead
 * (start with one layout, roll every relay over to another while events flow).
 */
function churnSchedules(partitions: number | undefined, base: fc.Arbitrary<Schedule>) {
  return fc
    .record({
      base,
      partitions:
        partitions === undefined ? fc.constantFrom(2, 3, 4, 6, 8) : fc.constant(partitions),
      skews: fc.array(fc.integer({ min: -2_000, max: 2_000 }), { minLength: 2, maxLength: 3 }),
      churn: fc.array(faultOf(CHURN), { maxLength: 4 }),
      layoutSwitch: fc.option(
        fc.record({
          from: fc.constantFrom(1, 2, 4),
          at: fc.integer({ min: 1_000, max: 12_000 }),
          gapMs: fc.integer({ min: 100, max: 4_000 }),
        }),
        { freq: 3 },
      ),
    })
    .map(({ base, partitions, skews, churn, layoutSwitch }) => {
      const relays = { skewsMs: skews };
      if (layoutSwitch) {
        const to = layoutSwitch.from === partitions ? 1 : partitions;
        const faults = [
          ...base.faults.slice(0, 3),
          ...rollingDeploy(skews.length, layoutSwitch.at, layoutSwitch.gapMs, to),
        ];
        const deploy = withPartitions({ ...base, relays, faults }, Math.max(layoutSwitch.from, to));
        return normalize({
          ...deploy,
          options: { ...deploy.options, partitions: layoutSwitch.from },
        });
      }
      const faults = [...base.faults.slice(0, 4), ...churn];
      return normalize(withPartitions({ ...base, relays, faults }, partitions));
    });
}
