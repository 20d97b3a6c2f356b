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

const topic = uniqueName('retried-ledger');
/** How many more calls fail (Infinity: all of them), and the calls made. */
let failing = Infinity;
let calls = 0;

@Controller()
class RetriedLedger {
  @EventPattern(topic)
  @IdempotentHandler({ consumer: 'retried-ledger', maxFailures: 3 })
  async onEntry(@Payload() entry: { n: number }, @Ctx() _context: KafkaContext) {
    calls++;
    if (failing > 0) {
      failing--;
      throw new Error(`ledger rejects entry ${entry.n}`);
    }
  }
}

/**
 * A requeued consumer dead letter gets its full retry budget again (`maxFailures` attempts),
 * not one attempt on top of the count that dead-lettered it.
 */
describeWith(['mongodb', 'kafka'], 'a requeued consumer dead letter', () => {
  const db = uniqueName('consumer-requeue');
  let consumer: ConsumerApp;
  let deadLetters: OutboxConsumerDeadLetters;

  beforeAll(async () => {
    await createTopics([topic], 1);
    consumer = await startConsumerApp(db, [RetriedLedger], {
      retryBackoff: { initialMs: 10, maxMs: 20 },
    });
    deadLetters = consumer.app.get(OutboxConsumerDeadLetters);
    await send(topic, [
      { key: 'acct-a', value: JSON.stringify({ n: 1 }), headers: { ce_id: 'r-1' } },
      { key: 'acct-b', value: JSON.stringify({ n: 2 }), headers: { ce_id: 'r-2' } },
    ]);
    await waitFor(async () => (await deadLetters.count()) === 2, 60_000, 'two dead letters');
  });
  afterAll(async () => {
    await consumer?.close();
    await dropDatabase(db);
  });

  it('is dead-lettered after maxFailures attempts', async () => {
    expect(calls).toBe(6);
    const letters = await deadLetters.list();
    expect(letters.map((l) => [l.eventId, l.attempts, l.reason])).toEqual([
      ['r-1', 3, 'max-failures'],
      ['r-2', 3, 'max-failures'],
    ]);
  });

  it('is applied when it succeeds within maxFailures attempts of the requeue', async () => {
    calls = 0;
    failing = 2;
    const done = await deadLetters.requeueMany({ eventIds: ['r-1'] });
    expect(done).toMatchObject({ requeued: 1, eventIds: ['r-1'], failed: [] });
    expect(calls).toBe(3);
    expect(await deadLetters.count({ eventIds: ['r-1'] })).toBe(0);
  });

  it('is dead-lettered again only after maxFailures new attempts', async () => {
    calls = 0;
    failing = Infinity;
    const done = await deadLetters.requeueMany({ eventIds: ['r-2'] });
    expect(done).toMatchObject({ requeued: 0, failed: [{ eventId: 'r-2' }] });
    expect(calls).toBe(3);
    const [letter] = await deadLetters.list({ eventIds: ['r-2'] });
    expect(letter).toMatchObject({ attempts: 3, reason: 'max-failures' });
  });
});
