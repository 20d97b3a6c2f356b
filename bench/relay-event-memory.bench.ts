/* What an event costs in memory while the relay holds it (`npm run bench -- relay` with
 * RELAY_BENCH_PARTS=event-memory; no server needed): the measurement behind the estimate the
 * in-flight budget charges (lib/relay/engine/event-memory.ts). For each payload size, N events
 * are encoded to BSON and decoded again (fresh objects, as the driver hands them), offered to a
 * real `RelayEngine` over a real `KafkaPublisher` whose sender never answers (so `publishConcurrency`
 * batches are in a send, each with its partitioned message, and the rest queued in lanes), then
 * the live heap plus memory outside it (after a full GC) is compared with the same process before
 * the events were decoded. Per event: that difference / N, beside its wire size (`sizeOf`) and the
 * estimate. */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { setImmediate as tick, setTimeout as sleep } from 'node:timers/promises';
import { mongo } from 'mongoose';
import type { OutboxEventRecord } from '../lib';
import { KafkaPublisher } from '../lib/publisher';
import { SendAbortedError } from '../lib/publisher/kafka/kafka.sender';
import type { KafkaSender } from '../lib/publisher/kafka/kafka.sender';
import { eventMemoryBytes } from '../lib/relay/engine/event-memory';
import { relayCore } from '../test/relay/support/relay-core';
import { InMemoryRelayStore } from '../test/relay/support/in-memory-relay.store';
import { check, line, sized } from './bench-part';
import type { BenchContext, BenchPart } from './bench-part';
import { makeEvent } from './support/bench-outbox';

const AGGREGATES_NOTE = '1 000 aggregates';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Sends that never answer: what the relay holds while its batches are in a send. */
const hangingSender: KafkaSender = {
  connect: async () => undefined,
  partitionCount: async () => 6,
  send: (_batches, signal) =>
    new Promise<void>((_, reject) =>
      signal?.addEventListener('abort', () => reject(new SendAbortedError())),
    ),
  replaceProducer: async () => undefined,
  disconnect: async () => undefined,
};

function live(): number {
  gc();
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

/** `count` events with a payload padded to about `padding` characters, as the driver decodes them. */
function decoded(count: number, padding: number, ownAggregates: boolean): OutboxEventRecord[] {
  const events: OutboxEventRecord[] = [];
  for (let i = 0; i < count; i++) {
    const event = makeEvent(i);
    if (ownAggregates) event.aggregateId = `own-${i}`;
    if (padding > 0) (event.payload as Record<string, unknown>).note = 'x'.repeat(padding);
    event.headers = { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` };
    events.push(mongo.BSON.deserialize(mongo.BSON.serialize(event)) as OutboxEventRecord);
  }
  return events;
}

interface Measured {
  wire: number;
  perEvent: number;
  estimate: number;
}

async function measure(count: number, padding: number, ownAggregates = false): Promise<Measured> {
  const publisher = new KafkaPublisher({ brokers: ['unused:9092'] }, hangingSender);
  const before = live();
  let events: OutboxEventRecord[] | undefined = decoded(count, padding, ownAggregates);
  const core = relayCore(new InMemoryRelayStore(), publisher, {
    batchSize: 500,
    maxInFlight: count,
    maxInFlightBytes: 16 * 1024 * 1024 * 1024,
    publishConcurrency: 4,
  });
  const wire = publisher.sizeOf(events[0]);
  await core.offer(events);
  for (let i = 0; i < 5; i++) await tick();
  check(core.engine.budget.events === count, `held ${core.engine.budget.events} of ${count}`);
  events = undefined; // only the relay holds them now
  const held = live() - before;
  // The engine's close timer does not keep the process alive; this does, until it closed.
  const alive = setInterval(() => undefined, 1000);
  await core.engine.close(0);
  await sleep(300); // the abandoned sends settle
  clearInterval(alive);
  return { wire, perEvent: held / count, estimate: eventMemoryBytes(wire) };
}

/**
 * A relay whose budget is `maxInFlightBytes` (and no event bound that binds), offered events of
 * `padding` until its budget admits no more read: the events it holds, and their memory.
 */
async function heldUnder(maxInFlightBytes: number, padding: number) {
  const publisher = new KafkaPublisher({ brokers: ['unused:9092'] }, hangingSender);
  const before = live();
  const core = relayCore(new InMemoryRelayStore(), publisher, {
    batchSize: 500,
    maxInFlight: 1_000_000,
    maxInFlightBytes,
    publishConcurrency: 4,
  });
  for (let page = 0; ; page++) {
    const reservation = core.engine.budget.tryReserve(500);
    if (!reservation) break;
    const events = decoded(reservation.events, padding, false).map((event, i) => {
      event.eventId = `${page}-${i}`;
      return event;
    });
    core.engine.offer(
      events.map((event) => ({ event, settle: () => undefined })),
      reservation,
    );
    await tick();
  }
  const held = { events: core.engine.budget.events, charged: core.engine.budget.bytes };
  const memory = live() - before;
  const alive = setInterval(() => undefined, 1000);
  await core.engine.close(0);
  await sleep(300);
  clearInterval(alive);
  return { ...held, memory };
}

const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MB`;

export const eventMemoryPart: BenchPart = {
  name: 'relay/event-memory',
  needs: [],
  run: async (ctx: BenchContext) => {
    const count = sized(ctx, 'RELAY_BENCH_MEMORY_EVENTS', 20_000, 2_000);
    const rows: Measured[] = [];
    for (const padding of [0, 1_000, 4_000, 16_000]) {
      const measured = await measure(count, padding);
      rows.push(measured);
      line(
        `${count} events held, ${measured.wire} bytes on the wire each`,
        `${measured.perEvent.toFixed(0)} bytes/event in memory (estimate ${measured.estimate})`,
      );
    }
    // Least squares: bytes in memory = fixed + factor x wire bytes.
    const n = rows.length;
    const mx = rows.reduce((sum, row) => sum + row.wire, 0) / n;
    const my = rows.reduce((sum, row) => sum + row.perEvent, 0) / n;
    const sxy = rows.reduce((sum, row) => sum + (row.wire - mx) * (row.perEvent - my), 0);
    const sxx = rows.reduce((sum, row) => sum + (row.wire - mx) ** 2, 0);
    const factor = sxy / sxx;
    line(
      `fit (${AGGREGATES_NOTE}): fixed + factor x wire bytes`,
      `${(my - factor * mx).toFixed(0)} + ${factor.toFixed(2)} x`,
    );
    // The worst case for the fixed part: each event of its own aggregate (a lane each).
    const own = await measure(count, 0, true);
    line(
      `${count} events held, each of its own aggregate, ${own.wire} bytes on the wire`,
      `${own.perEvent.toFixed(0)} bytes/event in memory (estimate ${own.estimate}): fixed ${(own.perEvent - factor * own.wire).toFixed(0)}`,
    );
    // The bound at two values: what the relay holds scales with it and stays near it.
    for (const bound of ctx.smoke ? [2 * 1048576] : [8 * 1048576, 32 * 1048576]) {
      for (const padding of [0, 4_000]) {
        const held = await heldUnder(bound, padding);
        line(
          `maxInFlightBytes ${mib(bound)}, payload +${padding} chars: held`,
          `${held.events} events, charged ${mib(held.charged)}, in memory ${mib(held.memory)}`,
        );
      }
    }
  },
};
