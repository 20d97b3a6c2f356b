import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Controller, Logger } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { IdempotentHandler, OUTBOX_CHANNELS } from '../../lib';
import type {
  ConsumerEventMessage,
  OutboxEventRecord,
  OutboxPublisher,
  PublishOutcome,
  RelayLeaseLostMessage,
  RelayLeaseTakenMessage,
} from '../../lib';
import { KafkaPublisher } from '../../lib/publisher/kafka/kafka.publisher';
import { dropDatabase, send, startConsumerApp } from '../consumer/consumer-app.fixtures';
import type { ConsumerApp } from '../consumer/consumer-app.fixtures';
import { createTopics, describeWith, readTopic, testServers, uniqueName } from '../harness';
import {
  startRelayApp,
  testLogLevels,
  testRelayOptions,
  waitFor,
} from '../relay/support/relay-app';
import type { RelayTestApp } from '../relay/support/relay-app';

jest.setTimeout(180_000);

/** The real Kafka publisher, except that aggregate `poison` always fails (retriably). */
class PoisonPublisher implements OutboxPublisher {
  constructor(private readonly inner: KafkaPublisher) {}
  connect(): Promise<void> {
    return this.inner.connect();
  }
  async publish(events: readonly OutboxEventRecord[]): Promise<PublishOutcome[]> {
    const healthy = events.filter((e) => e.aggregateId !== 'poison');
    const results = healthy.length > 0 ? await this.inner.publish(healthy) : [];
    return events.map((e) =>
      e.aggregateId === 'poison'
        ? { status: 'retriable', error: new Error('refused on purpose (test)') }
        : (results[healthy.indexOf(e)] as PublishOutcome),
    );
  }
  disconnect(): Promise<void> {
    return this.inner.disconnect();
  }
}

const CONSUMER = uniqueName('diag-consumer');

@Controller()
class OrderApplier {
  readonly applied: string[] = [];

  @EventPattern('OrderPlaced')
  @IdempotentHandler({ consumer: CONSUMER })
  apply(@Payload() event: { orderId: string }, @Ctx() _context: KafkaContext): void {
    this.applied.push(event.orderId);
  }
}

/**
 * One subscriber on every `OUTBOX_CHANNELS` channel, through a whole run: a relay (one event
 * of it refused until dead-lettered) and an `@IdempotentHandler` consumer, then a duplicate
 * delivery. Per event id, the subscriber sees the events in the order they happened.
 */
describeWith(['mongodb', 'kafka'], 'a diagnostics channel subscriber', () => {
  const db = uniqueName('relay-diag');
  const consumerDb = uniqueName('diag-consumer');
  const prefix = `${uniqueName('diag')}.`;
  const topic = `${prefix}Order`;
  const seen: Array<{ channel: string; message: Record<string, unknown> }> = [];
  const listeners = Object.values(OUTBOX_CHANNELS).map((channel) => {
    const listener = (message: unknown) =>
      seen.push({ channel, message: message as Record<string, unknown> });
    return { channel, listener };
  });
  let writer: RelayTestApp;
  let relay: RelayTestApp | undefined;
  let consumer: ConsumerApp;

  beforeAll(async () => {
    Logger.overrideLogger(testLogLevels());
    for (const { channel, listener } of listeners) subscribe(channel, listener);
    await createTopics([topic]);
    consumer = await startConsumerApp(
      consumerDb,
      [OrderApplier],
      {},
      {
        outboxServerTopics: [topic],
      },
    );
    // The writer last: the app bootstrapped last serves @Transactional/@EmitsEvent.
    writer = await startRelayApp(db, false);
  });
  afterAll(async () => {
    for (const { channel, listener } of listeners) unsubscribe(channel, listener);
    await relay?.close();
    await consumer?.close();
    await writer?.connection.dropDatabase().catch(() => undefined);
    await writer?.close();
    await dropDatabase(consumerDb);
  });

  it('sees every event of the run, in order per event id', async () => {
    await writer.orders.place('o-1', 'a', 1);
    await writer.orders.place('o-2', 'b', 2);
    await writer.orders.place('p-1', 'poison', 3);
    await writer.orders.place('o-3', 'a', 4);
    const outbox = writer.connection.collection('outbox');
    const deadLetters = writer.connection.collection('outbox_dead_letters');
    const ids = new Map<string, string>();
    for (const doc of await outbox.find().toArray())
      ids.set((doc.payload as { orderId: string }).orderId, doc.eventId as string);
    expect([...ids.keys()].sort()).toEqual(['o-1', 'o-2', 'o-3', 'p-1']);

    relay = await startRelayApp(
      db,
      testRelayOptions(prefix, {
        kafka: undefined,
        publisher: new PoisonPublisher(
          new KafkaPublisher({ brokers: testServers().kafkaBrokers, topicPrefix: prefix }),
        ),
        maxAttempts: 2,
        backoff: { initialMs: 100, maxMs: 200, jitter: 0 },
        // Long enough that a busy machine does not end the term midway.
        lease: { enabled: true, durationMs: 15_000, renewMs: 1000 },
      }),
    );
    const applied = consumer.app.get(OrderApplier).applied;
    await waitFor(async () => applied.length === 3, 60_000, 'three events applied');
    await waitFor(async () => (await deadLetters.countDocuments()) === 1, 30_000, 'a dead letter');

    // A duplicate delivery of o-1: the same record sent again (same ce_id).
    const records = await readTopic(topic, { count: 3, timeoutMs: 20_000 });
    const first = records.find((r) => r.headers.ce_id === ids.get('o-1'));
    expect(first).toBeDefined();
    await send(topic, [
      { key: first?.key ?? undefined, value: first?.value ?? null, headers: first?.headers },
    ]);
    const skipped = (id: string) =>
      seen.some((e) => e.channel === OUTBOX_CHANNELS.consumerSkipped && e.message.eventId === id);
    await waitFor(async () => skipped(ids.get('o-1') as string), 60_000, 'the duplicate skipped');

    const metrics = relay.metrics?.snapshot();
    await relay.close();
    relay = undefined;
    const onKafka = new Map<string, number>();
    for (const record of await readTopic(topic, { count: 1000, timeoutMs: 5000 }))
      onKafka.set(record.headers.ce_id, (onKafka.get(record.headers.ce_id) ?? 0) + 1);

    const short = (channel: string) => channel.replace('nestjs-outbox:', '');
    const mine = seen.filter((e) => !('consumer' in e.message) || e.message.consumer === CONSUMER);
    const sequence = (order: string) =>
      mine.filter((e) => e.message.eventId === ids.get(order)).map((e) => short(e.channel));
    const count = (channel: string) => seen.filter((e) => e.channel === channel).length;

    // Every event the relay counted is seen, no more (the metrics count each, duplicates included).
    expect(count(OUTBOX_CHANNELS.relayPublished)).toBe(metrics?.published);
    expect(count(OUTBOX_CHANNELS.relayRetryScheduled)).toBe(metrics?.retried);
    expect(count(OUTBOX_CHANNELS.relayDeadLettered)).toBe(metrics?.deadLettered);
    expect(metrics?.deadLettered).toBeGreaterThanOrEqual(1);

    for (const order of ['o-1', 'o-2', 'o-3']) {
      const events = sequence(order);
      const sentByTest = order === 'o-1' ? 1 : 0;
      // One relay:published per record the relay wrote to Kafka (a slow mark can make a duplicate).
      expect(events.filter((e) => e === 'relay:published')).toHaveLength(
        (onKafka.get(ids.get(order) as string) ?? 0) - sentByTest,
      );
      // Published first; then applied once, every later delivery skipped.
      expect(events[0]).toBe('relay:published');
      const consumed = events.filter((e) => e.startsWith('consumer:'));
      expect(consumed[0]).toBe('consumer:applied');
      expect(consumed.slice(1).every((e) => e === 'consumer:skipped')).toBe(true);
      expect(consumed.length).toBeGreaterThanOrEqual(1 + sentByTest);
    }
    // Failed, then dead-lettered; again only after a new term (a failure record the old term
    // could not write before its lease ran out). Within one term the relay reads the event
    // again only once its failure record landed: each attempt is counted once.
    const poisonEvents = sequence('p-1');
    expect(poisonEvents.join(' ')).toMatch(
      /^(relay:retry-scheduled )+relay:dead-lettered( (relay:retry-scheduled )+relay:dead-lettered)*$/,
    );
    const terms = seen.filter((e) => e.channel === OUTBOX_CHANNELS.relayLeaseTaken).length;
    if (terms === 1) expect(poisonEvents).toEqual(['relay:retry-scheduled', 'relay:dead-lettered']);
    if (metrics?.published === 3) {
      // No duplicate from the relay (the usual run): the whole story, exactly.
      expect(sequence('o-1')).toEqual(['relay:published', 'consumer:applied', 'consumer:skipped']);
      expect(sequence('o-2')).toEqual(['relay:published', 'consumer:applied']);
      expect(sequence('o-3')).toEqual(['relay:published', 'consumer:applied']);
    }
    if (metrics?.retried === 1 && metrics.deadLettered === 1) {
      expect(poisonEvents).toEqual(['relay:retry-scheduled', 'relay:dead-lettered']);
    }

    // The messages carry what the docs say.
    const poison = seen.filter((e) => e.message.eventId === ids.get('p-1'));
    expect(poison[0].message).toMatchObject({
      eventType: 'OrderPlaced',
      aggregateType: 'Order',
      aggregateId: 'poison',
      attempts: 1,
      maxAttempts: 2,
      error: expect.stringContaining('refused on purpose'),
    });
    expect(poison[0].message.nextAttemptAt).toBeInstanceOf(Date);
    expect(
      poison.find((e) => e.channel === OUTBOX_CHANNELS.relayDeadLettered)?.message,
    ).toMatchObject({
      reason: 'max-attempts',
      attempts: 2,
      error: expect.stringContaining('refused on purpose'),
    });
    const appliedMessage = seen.find(
      (e) => e.channel === OUTBOX_CHANNELS.consumerApplied && e.message.eventId === ids.get('o-2'),
    )?.message as unknown as ConsumerEventMessage;
    expect(appliedMessage).toMatchObject({ consumer: CONSUMER, topic });
    expect(typeof appliedMessage.partition).toBe('number');
    expect(typeof appliedMessage.offset).toBe('string');

    // The relay's lease: taken before anything was published, released on close, after all;
    // taken and lost alternate (a slow lease answer ends a term, the next tick takes a new one).
    const relayEvents = seen.filter((e) => e.channel.startsWith('nestjs-outbox:relay:'));
    const leases = relayEvents.filter((e) => e.channel.includes(':lease-'));
    expect(relayEvents[0]).toBe(leases[0]);
    expect(relayEvents[relayEvents.length - 1]).toBe(leases[leases.length - 1]);
    leases.forEach((e, i) =>
      expect(e.channel).toBe(
        i % 2 === 0 ? OUTBOX_CHANNELS.relayLeaseTaken : OUTBOX_CHANNELS.relayLeaseLost,
      ),
    );
    const { relay: name, owner } = leases[0].message as unknown as RelayLeaseTakenMessage;
    expect(typeof (leases[0].message as unknown as RelayLeaseTakenMessage).fencing).toBe('number');
    for (const lease of leases) expect(lease.message).toMatchObject({ relay: name, owner });
    const end = leases[leases.length - 1].message as unknown as RelayLeaseLostMessage;
    if (end.released) expect(end.reason).toBe('the relay is stopping');
    expect(leases.filter((e) => e.message.released === true)).toHaveLength(end.released ? 1 : 0);
    // Every other relay message is about one of this run's events.
    const known = new Set(ids.values());
    for (const e of relayEvents.filter((r) => !leases.includes(r)))
      expect(known.has(e.message.eventId as string)).toBe(true);
  });
});
