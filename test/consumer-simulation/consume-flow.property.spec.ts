/**
 * Property-based suite of the consumer side: the real consume flow (`consumeIdempotently`,
 * `consumeRejected`, `runAttempt`, `ConsumerSink`, the MongoDB stores' own code) on simulated
 * ports (see consumer-sim.world.ts), under generated deliveries (relay duplicates, redeliveries
 * after pauses, rebalances and restarts replaying from the committed offset), handlers that
 * work, throw, hang past `handlerTimeoutMs` or throw `UnrecoverableEventError`, pipes that
 * reject, `dto`/`validate` checks that refuse or throw, and a database, failure store and
 * dead-letter topic failing transiently or (the topic) for good. With `batchMaxEvents` above 1,
 * the partition's next messages are applied in one transaction as `OutboxKafkaServer` does
 * (`applyBatch`, `consumeInBatch`), with every behaviour above at any position of a batch, a
 * crash inside a batch or between its commit and its offsets, and rebalances inside it.
 *
 * Seeded and replayable: each run prints its seed; run it again with
 *   CONSUMER_SIM_SEED=<seed> [CONSUMER_SIM_PATH=<path>] npx jest test/consumer-simulation
 * More runs: CONSUMER_SIM_RUNS=2000 (default 150, a few seconds).
 */
import fc from 'fast-check';
import { ConsumerWorld } from './consumer-sim.world';
import { scenarioArbitrary, type Scenario } from './consumer-sim.scenario';

const runs = Number(process.env.CONSUMER_SIM_RUNS ?? 150);
const seed = process.env.CONSUMER_SIM_SEED ? Number(process.env.CONSUMER_SIM_SEED) : Date.now();
const path = process.env.CONSUMER_SIM_PATH;
const options = (numRuns: number) => ({ seed, numRuns, ...(path ? { path } : {}) });
/** Jest's limit for a test of `numRuns` runs (a run takes about 20 ms on a loaded machine). */
const timeoutFor = (numRuns: number) => 30_000 + numRuns * 100;

/** Every violated property of one run, one line each (empty: all hold). */
function violations(world: ConsumerWorld, scenario: Scenario): string[] {
  const found: string[] = [];
  const appliedIds = world.applied.docs.map((d) => String(d.eventId));

  // Nothing escapes the flow but RedeliveryRequired (anything else stalls a partition).
  for (const line of world.escaped) found.push(`escaped the flow: ${line}`);

  // No message is delivered again and again without a fault: only a pipe's rejections (each
  // counted toward maxFailures) end a delivery unacknowledged when nothing failed around it, so
  // a message ends within maxFailures such deliveries.
  for (const m of world.messages) {
    if (m.mostUnendedWithoutFault > scenario.maxFailures - 1) {
      found.push(
        `${m.key} ended unacknowledged ${m.mostUnendedWithoutFault} times in a row without a fault`,
      );
    }
  }

  // No event applied twice; none of a timed-out handler's late writes landed.
  const seen = new Set<string>();
  for (const id of appliedIds) {
    if (seen.has(id)) found.push(`${id} applied twice`);
    seen.add(id);
  }
  if (world.lateWrites.includes('landed'))
    found.push('a timed-out handler wrote after its timeout');

  // Every delivery ended applied, as a duplicate, or dead-lettered, as its event must.
  scenario.events.forEach((event, index) => {
    const eventId = `evt-${index}`;
    const expected = world.expected(event);
    const messages = world.messages.filter((m) => m.event.index === index);
    const endings = messages.flatMap((m) => m.endings);
    if (messages.some((m) => m.endings.length === 0))
      found.push(`${eventId}: a message never ended`);
    if (expected.kind === 'applied') {
      if (!appliedIds.includes(eventId)) found.push(`${eventId} should be applied, is not`);
      if (endings.some((e) => e === 'dead-lettered'))
        found.push(`${eventId} applied and dead-lettered`);
      return;
    }
    if (event.input === 'ok' && appliedIds.includes(eventId)) {
      found.push(`${eventId} should be dead-lettered (${expected.reason}), was applied`);
    }
    if (endings.some((e) => e !== 'dead-lettered')) {
      found.push(`${eventId} should end dead-lettered, ended ${endings.join(', ')}`);
    }
    const letters = world.deadLetters.docs.filter((d) =>
      event.input === 'no-id'
        ? d.eventId === null &&
          messages.some((m) => m.message.offset === d.offset && m.message.partition === d.partition)
        : d.eventId === eventId,
    );
    if (
      letters.length === 0 ||
      letters.some((d) => d.status !== 'dead' || d.reason !== expected.reason)
    ) {
      found.push(
        `${eventId} should be a dead letter (${expected.reason}), store has ${JSON.stringify(letters.map((d) => [d.status, d.reason]))}`,
      );
    }
    if (scenario.deadLetterTopic && letters.some((d) => d.topicCopy === undefined)) {
      found.push(`${eventId}: dead letter without its topic copy's state`);
    }
  });

  // A copy on the dead-letter topic only for a message that is dead-lettered.
  for (const copy of world.topicCopies) {
    const stored = world.deadLetters.docs.some(
      (d) =>
        d.status === 'dead' &&
        (copy.eventId !== null
          ? d.eventId === copy.eventId
          : d.partition === copy.message.partition && d.offset === copy.message.offset),
    );
    if (!stored)
      found.push(`a dead-letter topic copy of ${copy.eventId} that is not dead-lettered`);
  }

  // Counted: the metrics agree with how the deliveries ended.
  const metrics = world.metrics.snapshot();
  for (const [kind, counter] of [
    ['applied', metrics.applied],
    ['duplicate', metrics.duplicates],
    ['dead-lettered', metrics.deadLettered],
  ] as const) {
    if (counter !== world.tally[kind]) {
      found.push(`metrics say ${counter} ${kind}, deliveries ended ${world.tally[kind]} so`);
    }
  }

  // Atomic: an event's effects committed if and only if its dedupe record did.
  const recorded = world.processed.docs.map((d) => String(d.eventId)).sort();
  const effects = [...new Set(appliedIds)].sort();
  if (JSON.stringify(recorded) !== JSON.stringify(effects)) {
    found.push(
      `dedupe records ${JSON.stringify(recorded)} differ from applied effects ${JSON.stringify(effects)}`,
    );
  }

  // Partition order: a partition's events are applied in the order of their first offsets.
  const lastByPartition = new Map<number, number>();
  for (const id of appliedIds) {
    const m = world.messages.find((x) => `evt-${x.event.index}` === id)!;
    const offset = Number(m.message.offset);
    if ((lastByPartition.get(m.message.partition) ?? -1) > offset) {
      found.push(
        `partition ${m.message.partition}: ${id} (offset ${offset}) applied after a later event`,
      );
    }
    lastByPartition.set(m.message.partition, offset);
  }

  // Kafka order: an aggregate's events are applied in the order of their first offsets.
  const firstOffset = new Map<string, number>();
  for (const m of world.messages) {
    const id = `evt-${m.event.index}`;
    if (!firstOffset.has(id)) firstOffset.set(id, Number(m.message.offset));
  }
  const lastByAggregate = new Map<number, number>();
  for (const id of appliedIds) {
    const index = Number(id.slice(4));
    const { aggregate } = scenario.events[index];
    const offset = firstOffset.get(id)!;
    if ((lastByAggregate.get(aggregate) ?? -1) > offset) {
      found.push(`aggregate ${aggregate}: ${id} (offset ${offset}) applied after a later event`);
    }
    lastByAggregate.set(aggregate, offset);
  }
  return found;
}

describe('consume flow under simulated deliveries and faults (property-based)', () => {
  it(
    `every delivery ends applied, duplicate or dead-lettered, each event applied at most once, atomically with its dedupe record, in partition order, batched or not (seed ${seed})`,
    async () => {
      // What the runs went through, so a generator that stopped producing a case is noticed.
      const seen = {
        applied: 0,
        duplicate: 0,
        deadLettered: 0,
        faults: 0,
        lateWritesRefused: 0,
        batchesCommitted: 0,
        batchesFellBack: 0,
        batchesCrashed: 0,
      };
      await fc.assert(
        fc.asyncProperty(scenarioArbitrary, async (scenario) => {
          const world = new ConsumerWorld(scenario);
          await world.run();
          const found = violations(world, scenario);
          if (found.length > 0) throw new Error(found.join('\n'));
          seen.applied += world.tally.applied;
          seen.duplicate += world.tally.duplicate;
          seen.deadLettered += world.tally['dead-lettered'];
          seen.faults += world.faultsFired;
          seen.lateWritesRefused += world.lateWrites.filter((w) => w === 'refused').length;
          seen.batchesCommitted += world.batches.committed;
          seen.batchesFellBack += world.batches.fellBack;
          seen.batchesCrashed += world.batches.crashed;
        }),
        options(runs),
      );
      if (path === undefined && runs >= 50) {
        for (const [what, count] of Object.entries(seen)) {
          expect({ [what]: count > 0 }).toEqual({ [what]: true });
        }
      }
    },
    timeoutFor(runs),
  );

  // Requeue gives full retries: a dead letter requeued after the handler was fixed gets
  // maxFailures tries again (issue 18, defect 6: the failure count restarts on requeue).
  it(
    `requeue gives a dead letter its full retries (seed ${seed})`,
    async () => {
      await fc.assert(
        fc.asyncProperty(
          scenarioArbitrary.filter((s) => s.maxFailures > 1),
          async (scenario) => {
            const world = new ConsumerWorld(scenario);
            await world.run();
            const requeued = await world.requeue();
            const notApplied = requeued.filter((r) => r.ending !== 'applied');
            if (notApplied.length > 0) {
              throw new Error(
                `requeued with maxFailures ${scenario.maxFailures}, not applied: ${JSON.stringify(notApplied)}`,
              );
            }
            const ids = world.applied.docs.map((d) => d.eventId);
            if (new Set(ids).size !== ids.length) throw new Error('an event applied twice');
          },
        ),
        options(Math.max(10, Math.floor(runs / 5))),
      );
    },
    timeoutFor(runs),
  );
});
