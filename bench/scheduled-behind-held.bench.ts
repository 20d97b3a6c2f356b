/* Part 3 of `npm run bench -- scheduled` (issue #31): 1 000 aggregates due at once behind one
 * aggregate holding 10 000 due events on a held topic. The held aggregate's topic does not exist
 * (the bench broker creates none on demand), so the broker refuses it and the relay holds that
 * topic and retries it; the other aggregates (one event each, on a healthy topic) are due 1 ms
 * after it. They must be published at the drain's rate (the relay's normal drain of as many
 * immediate events, measured first in the same run), not after the held aggregate's retries;
 * the held events stay pending. Under `--smoke`: 1 000 held, 100 behind. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kafka } from 'kafkajs';
import { eventSlot } from '../lib/events/event-slot';
import { serverTime } from '../lib/relay/mongo/relay-collections';
import { check, line, sized } from './bench-part';
import type { BenchContext } from './bench-part';
import { backlogDrain } from './relay-drain.bench';
import { openBenchOutbox, topicSize } from './support/bench-outbox';
import {
  burstLeadMs,
  count,
  deliveryReport,
  insertAll,
  percentile,
  ratio,
  readTopic,
  scheduledEvent,
  startRelay,
  untilNonePending,
} from './support/scheduled-relay';

/** The held aggregate's type: its topic (`<prefix>Held`) is never created. */
const HELD_TYPE = 'Held';
const HELD_ID = 'held-1';

export async function behindHeldAggregate(ctx: BenchContext, kafka: Kafka): Promise<void> {
  const held = sized(ctx, 'SCHEDULED_BENCH_HELD', 10_000, 1_000);
  const behind = sized(ctx, 'SCHEDULED_BENCH_BEHIND', 1_000, 100);
  const drainRate = await backlogDrain(ctx, kafka, behind);

  const bench = await openBenchOutbox(ctx, kafka, 'sched-held');
  const { client, outbox, topic } = bench;
  try {
    const { relay } = await startRelay(bench, { idleMs: 100 });
    const due = new Date((await serverTime(client.db())).getTime() + burstLeadMs(ctx));
    const behindDue = new Date(due.getTime() + 1);
    const heldSeconds = await insertAll(outbox, held, (i) => ({
      ...scheduledEvent(i, due),
      aggregateType: HELD_TYPE,
      aggregateId: HELD_ID,
      slot: eventSlot(HELD_TYPE, HELD_ID),
    }));
    const ids = new Set<string>();
    await insertAll(outbox, behind, (i) => {
      const event = scheduledEvent(i, behindDue);
      ids.add(event.eventId);
      return event;
    });
    if ((await serverTime(client.db())) >= due) {
      await relay.stop();
      throw new Error(
        `the events took too long to write and were due before they were all written: ` +
          `raise SCHEDULED_BENCH_LEAD_MS (now ${burstLeadMs(ctx)} ms)`,
      );
    }
    // Same machine: the server's clock and this process's are the same clock.
    await sleep(Math.max(0, behindDue.getTime() - Date.now()));
    const pending = await untilNonePending(outbox, { aggregateType: 'Order' });
    const markedMs = Date.now() - behindDue.getTime();
    await relay.stop();
    const heldPending = await outbox.countDocuments({
      aggregateType: HELD_TYPE,
      status: 'pending',
    });
    const inKafka = await topicSize(kafka, topic);
    const deliveries = await readTopic(kafka, topic, inKafka);

    const { lost, duplicates, early, lateness } = deliveryReport(deliveries, ids, behindDue);
    const markedRate = behind / (markedMs / 1000);
    process.stdout.write(
      `${count(behind)} aggregates due at once, 1 ms behind one aggregate with ${count(held)} due ` +
        `events on a held topic (${ctx.mongoKind}; held events written in ${heldSeconds.toFixed(1)} s):\n`,
    );
    line(
      `due -> the ${count(behind)} others all marked published`,
      `${markedMs} ms, ${markedRate.toFixed(0)} ev/s`,
    );
    line(
      `ratio to the drain of ${count(behind)} immediate events (marked)`,
      ratio(markedRate, drainRate),
    );
    line(
      'lateness of the others (record timestamp - availableAt)',
      `p50 ${percentile(lateness, 50)} ms, p99 ${percentile(lateness, 99)} ms, max ${lateness.at(-1)} ms`,
    );
    line(
      'others lost / duplicates / published early; still pending',
      `${lost} / ${duplicates} / ${early}; ${pending}`,
    );
    line(
      'held events still pending (their topic does not exist)',
      `${count(heldPending)} of ${count(held)}`,
    );
    check(early === 0, `${early} events published before their availableAt`);
    check(lost === 0, `${lost} events behind the held aggregate never reached Kafka`);
    check(duplicates === 0, `${duplicates} events published twice without a crash`);
    check(pending === 0, `${pending} events behind the held aggregate still pending`);
    check(heldPending === held, `${held - heldPending} events of the held topic left pending`);
  } finally {
    await bench.close();
  }
}
