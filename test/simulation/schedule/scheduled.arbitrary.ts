import fc from 'fast-check';
import { ACTIVE_PHASE_MS } from './schedule.types';
import type { Schedule, SimEventData, SimTransactionData } from './schedule.types';

/**
 * How far in the past an `availableAt` may be given (the write side accepts it within its
 * documented tolerance and stores it as given: due at once).
 */
export const PAST_AVAILABLE_AT_MS = 1_000;

/** Aggregates per type in schedules with a burst of scheduled events (more than the budget reads). */
const BURST_AGGREGATES = 40;

/** What an event of the base schedule becomes: unchanged, or scheduled with this delay. */
const eventPlan: fc.Arbitrary<{ delayMs?: number; exempt: boolean }> = fc.record({
  delayMs: fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    // Equal delays: several events due at the same moment.
    { weight: 2, arbitrary: fc.constantFrom(0, 500, 1_000, 2_000, 4_000) },
    { weight: 2, arbitrary: fc.integer({ min: 0, max: 8_000 }) },
    // Already past when written, within the write side's tolerance.
    { weight: 1, arbitrary: fc.integer({ min: -PAST_AVAILABLE_AT_MS, max: -1 }) },
  ),
  // `waitForScheduled: false`, on scheduled and immediate events alike.
  exempt: fc.oneof(
    { weight: 5, arbitrary: fc.constant(false) },
    { weight: 1, arbitrary: fc.constant(true) },
  ),
});

/**
 * Many events due about together (`maxInFlight` and the due reader's page limit bite): 15-50
 * transactions of 1-4 scheduled events over up to 40 aggregates per type, due within `spreadMs`
 * of `at` + `delayMs`.
 */
const scheduledBurst = fc.record({
  at: fc.integer({ min: 0, max: ACTIVE_PHASE_MS }),
  delayMs: fc.integer({ min: 500, max: 8_000 }),
  spreadMs: fc.constantFrom(0, 0, 200, 2_000),
  transactions: fc.array(
    fc.record({
      offset: fc.integer({ min: 0, max: 300 }),
      writer: fc.integer({ min: 0, max: 2 }),
      durationMs: fc.integer({ min: 1, max: 20 }),
      extraDelayMs: fc.integer({ min: 0, max: 2_000 }),
      events: fc.array(
        fc.record({
          type: fc.integer({ min: 0, max: 2 }),
          aggregate: fc.integer({ min: 0, max: BURST_AGGREGATES - 1 }),
          payloadBytes: fc.integer({ min: 10, max: 800 }),
        }),
        { minLength: 1, maxLength: 4 },
      ),
    }),
    { minLength: 15, maxLength: 50 },
  ),
});

/**
 * A cancellation of the `target`-th scheduled event, `offsetMs` from its due time (negative:
 * before it is due; around 0: racing the due reader).
 */
const cancelPlan = fc.record({
  target: fc.nat(),
  offsetMs: fc.oneof(
    { weight: 2, arbitrary: fc.integer({ min: -300, max: 300 }) },
    { weight: 2, arbitrary: fc.integer({ min: -4_000, max: -300 }) },
    { weight: 1, arbitrary: fc.integer({ min: 300, max: 3_000 }) },
  ),
  writer: fc.integer({ min: 0, max: 2 }),
  durationMs: fc.integer({ min: 1, max: 30 }),
});

/**
 * With a burst, one aggregate with more due events than any page of the due read holds
 * (`maxInFlight` is at most 64 here), all due with the burst's first, written just before it;
 * in two of three its topic is refused from the due time on for `heldMs` (a held topic), so the
 * burst's other aggregates are due right behind an aggregate the relay cannot publish.
 */
const heavyAggregate = fc.record({
  type: fc.integer({ min: 0, max: 2 }),
  events: fc.integer({ min: 70, max: 300 }),
  heldMs: fc.oneof(
    { weight: 1, arbitrary: fc.constant(0) },
    { weight: 2, arbitrary: fc.integer({ min: 1_000, max: 8_000 }) },
  ),
});

const plan = fc.record({
  events: fc.array(eventPlan, { minLength: 1, maxLength: 24 }),
  burst: fc.option(scheduledBurst, { freq: 2 }),
  heavy: fc.option(heavyAggregate, { freq: 2 }),
  // Without aggregateSequence, the writers share the aggregates in half the plans (issue 31:
  // an event that waits, written by another app process, follows what it waits for).
  shared: fc.boolean(),
  cancels: fc.array(cancelPlan, { maxLength: 8 }),
});

type Plan = typeof plan extends fc.Arbitrary<infer T> ? T : never;

/**
 * Scheduled and cancelled events on top of `base` (any schedule, its faults kept): in a share of
 * the schedules, the events of its transactions are scheduled by the plan (delays of 0 to 8 s,
 * some equal, some in the past within tolerance, some `waitForScheduled: false`), maybe a burst
 * of scheduled events, and cancellations before, around and after due.
 */
export function withScheduledEvents(
  base: fc.Arbitrary<Schedule>,
  share: { scheduled: number; plain: number },
): fc.Arbitrary<Schedule> {
  return fc
    .tuple(
      base,
      fc.oneof(
        { weight: share.plain, arbitrary: fc.constant(undefined) },
        { weight: share.scheduled, arbitrary: plan },
      ),
    )
    .map(([schedule, scheduled]) => (scheduled ? applyPlan(schedule, scheduled) : schedule));
}

function applyPlan(schedule: Schedule, plan: Plan): Schedule {
  let next = 0;
  const scheduleEvent = (event: SimEventData): SimEventData => {
    const { delayMs, exempt } = plan.events[next++ % plan.events.length];
    return {
      ...event,
      ...(delayMs === undefined ? {} : { delayMs }),
      ...(exempt ? { waitForScheduled: false as const } : {}),
    };
  };
  const transactions: SimTransactionData[] = schedule.transactions.map((tx) => ({
    ...tx,
    events: tx.events.map(scheduleEvent),
  }));
  const burst = plan.burst;
  const faults = [...schedule.faults];
  if (burst && plan.heavy) {
    const { type, events, heldMs } = plan.heavy;
    const at = Math.max(0, burst.at - 1);
    transactions.push({
      at,
      writer: 0,
      durationMs: 1,
      events: Array.from({ length: events }, () => ({
        type,
        aggregate: 0,
        payloadBytes: 10,
        delayMs: burst.delayMs,
      })),
    });
    if (heldMs > 0)
      faults.push({
        kind: 'kafka-topic-missing',
        at: at + burst.delayMs,
        duration: heldMs,
        target: type,
        param: 0,
      });
  }
  if (burst) {
    burst.transactions.forEach((tx, index) => {
      const spread = burst.spreadMs === 0 ? 0 : (index * 97) % burst.spreadMs;
      transactions.push({
        at: Math.min(ACTIVE_PHASE_MS, burst.at + tx.offset),
        writer: tx.writer,
        durationMs: tx.durationMs,
        events: tx.events.map((event) => ({
          ...event,
          delayMs: burst.delayMs + spread + (burst.spreadMs === 0 ? 0 : tx.extraDelayMs % 50),
        })),
      });
    });
  }
  // The scheduled events and when each is due about (the writer may start it later).
  const scheduled: Array<{ tx: number; event: number; due: number }> = [];
  transactions.forEach((tx, txIndex) =>
    tx.events.forEach((event, index) => {
      if (event.delayMs !== undefined)
        scheduled.push({ tx: txIndex, event: index, due: tx.at + event.delayMs });
    }),
  );
  if (scheduled.length > 0) {
    for (const cancel of plan.cancels) {
      const target = scheduled[cancel.target % scheduled.length];
      transactions.push({
        at: Math.max(0, target.due + cancel.offsetMs),
        writer: cancel.writer,
        durationMs: cancel.durationMs,
        events: [],
        cancels: [{ tx: target.tx, event: target.event }],
      });
    }
  }
  const world = {
    ...schedule.world,
    ...(burst
      ? { aggregatesPerType: Math.max(schedule.world.aggregatesPerType, BURST_AGGREGATES) }
      : {}),
    ...(plan.shared && !schedule.world.aggregateSequence ? { sharedAggregates: true } : {}),
  };
  return { ...schedule, world, transactions, faults };
}
