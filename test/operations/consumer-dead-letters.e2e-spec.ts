import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { IdempotentHandler, OutboxConsumerDeadLetters } from '../../lib';
import {
  dropDatabase,
  send,
  startConsumerApp,
  type ConsumerApp,
} from '../consumer/consumer-app.fixtures';
import { createTopics, describeWith, uniqueName, waitFor } from '../harness';
import { startRelayApp } from '../relay/support/relay-app';

const topic = uniqueName('ledger');
const applied: string[] = [];
let broken = true;

@Controller()
class FlakyLedger {
  @EventPattern(topic)
  @IdempotentHandler({ consumer: 'flaky-ledger', maxFailures: 1 })
  async onEntry(@Payload() entry: { n: number }, @Ctx() ctx: KafkaContext) {
    if (broken) throw new Error(`ledger rejects entry ${entry.n}`);
    applied.push(`${String(ctx.getMessage().key)}:${entry.n}`);
  }
}

const message = (eventId: string, key: string, n: number, eventType = 'LedgerEntry') => ({
  key,
  value: JSON.stringify({ n }),
  headers: { ce_id: eventId, ce_type: eventType },
});

/**
 * Consumer dead letters, made by a real consumer reading the real broker, listed and purged by
 * filter, and requeued in the consumer's own app: each is applied again through its handler,
 * in Kafka order, once the handler is fixed.
 */
describeWith(['mongodb', 'kafka'], 'consumer dead letters by filter', () => {
  const db = uniqueName('consumer-dl');
  let consumer: ConsumerApp;
  let deadLetters: OutboxConsumerDeadLetters;

  beforeAll(async () => {
    await createTopics([topic], 1);
    consumer = await startConsumerApp(db, [FlakyLedger]);
    deadLetters = consumer.app.get(OutboxConsumerDeadLetters);
    await send(topic, [
      message('c-1', 'acct-a', 1),
      message('c-2', 'acct-a', 2),
      message('c-3', 'acct-b', 3, 'LedgerCorrection'),
    ]);
    await waitFor(async () => (await deadLetters.count()) === 3, 60_000, 'three dead letters');
  });
  afterAll(async () => {
    await consumer?.close();
    await dropDatabase(db);
  });

  it('lists and counts by consumer, event type, key, topic and error text', async () => {
    expect(await deadLetters.count({ consumer: 'flaky-ledger', topic })).toBe(3);
    expect(await deadLetters.count({ eventType: 'LedgerCorrection' })).toBe(1);
    expect(await deadLetters.count({ error: 'REJECTS ENTRY 2' })).toBe(1);
    const listed = await deadLetters.list({ aggregateId: 'acct-a' });
    expect(listed.map((l) => [l.eventId, l.reason, l.attempts])).toEqual([
      ['c-1', 'max-failures', 1],
      ['c-2', 'max-failures', 1],
    ]);
    expect(await deadLetters.purge({ eventType: 'LedgerEntry' }, { dryRun: true })).toEqual({
      dryRun: true,
      matched: 2,
      deleted: 0,
    });
  });

  it('a dry run lists what it would apply again, in Kafka order', async () => {
    const dry = await deadLetters.requeueMany({}, { dryRun: true, batchSize: 2 });
    expect(dry).toMatchObject({ dryRun: true, eventIds: ['c-1', 'c-2', 'c-3'], failed: [] });
    expect(applied).toEqual([]);
  });

  it('requeue applies them again through the handler once it is fixed, and removes them', async () => {
    broken = false;
    const done = await deadLetters.requeueMany({ aggregateId: 'acct-a' }, { batchSize: 1 });
    expect(done).toMatchObject({ requeued: 2, eventIds: ['c-1', 'c-2'], failed: [] });
    expect(applied).toEqual(['acct-a:1', 'acct-a:2']);
    expect(await deadLetters.count()).toBe(1);
    const records = await consumer.connection
      .collection('outbox_processed_events')
      .countDocuments({ consumer: 'flaky-ledger' });
    expect(records).toBe(2);
  });

  it('an app without the handler says where to requeue, and purge removes the rest', async () => {
    const other = await startRelayApp(db, false);
    try {
      const elsewhere = await other.app.get(OutboxConsumerDeadLetters).requeueMany();
      expect(elsewhere.requeued).toBe(0);
      expect(elsewhere.failed).toEqual([
        {
          eventId: 'c-3',
          error: expect.stringContaining('no @IdempotentHandler with consumer "flaky-ledger"'),
        },
      ]);
    } finally {
      await other.close();
    }
    expect(await deadLetters.purge({ consumer: 'flaky-ledger' })).toEqual({
      dryRun: false,
      matched: 1,
      deleted: 1,
    });
    expect(applied).toEqual(['acct-a:1', 'acct-a:2']);
  });
});
