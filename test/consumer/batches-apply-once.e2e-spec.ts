import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { IdempotentHandler, OutboxConsumerMetrics } from '../../lib';
import { createTopics, describeWith, uniqueName } from '../harness';
import {
  dropDatabase,
  eventMessage,
  LedgerService,
  send,
  startConsumerApp,
  waitFor,
  type ConsumerApp,
} from './consumer-app.fixtures';

const PATTERN = 'BatchedOrderPlaced';
const CONSUMER = 'batches.orders';
const calls = new Map<string, number>();
const id = (ctx: KafkaContext) => String(ctx.getMessage().headers?.ce_id ?? '');

@Controller()
class BatchedOrders {
  constructor(private readonly ledger: LedgerService) {}

  @EventPattern(PATTERN)
  @IdempotentHandler({ consumer: CONSUMER })
  async onOrder(@Payload() p: { n: number }, @Ctx() ctx: KafkaContext) {
    calls.set(id(ctx), (calls.get(id(ctx)) ?? 0) + 1);
    await this.ledger.record(CONSUMER, id(ctx), p.n);
  }
}

/** `count` events on `topic` (`ce_type` routes them), each event published twice in a row. */
async function sendTwice(topic: string, prefix: string, count: number): Promise<void> {
  const messages = Array.from({ length: count }, (_, i) => {
    const m = eventMessage(`${prefix}-${i}`, { n: i }, { headers: { ce_type: PATTERN } });
    return [m, m];
  }).flat();
  await send(topic, messages);
}

const batched = (topic: string) => ({ outboxServerTopics: [topic] });

/**
 * Batches on the real broker (issue 32): the events Kafka fetched together are applied in one
 * transaction each, relay duplicates inside a batch (which abort it) end applied once, and a
 * replay of batches already committed (a new group reading from the start, as after a crash
 * between a commit and its offsets) runs no handler again.
 */
describeWith(['mongodb', 'kafka'], 'consumer batches apply each event once', () => {
  const db = uniqueName('batches');
  const topic = uniqueName('batches');
  const apps: ConsumerApp[] = [];

  beforeAll(() => createTopics([topic], 1), 60000);
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  }, 30000);
  afterAll(() => dropDatabase(db));

  const ledger = (app: ConsumerApp) =>
    app.connection.collection('ledger').find({ consumer: CONSUMER }).toArray();

  it('relay duplicates inside fetched batches: each event applied once; a replay runs no handler', async () => {
    calls.clear();
    await sendTwice(topic, 'dup', 20);
    const first = await startConsumerApp(db, [BatchedOrders], {}, batched(topic));
    apps.push(first);
    await waitFor(async () => (await ledger(first)).length >= 20, 60_000, '20 applied');
    const docs = await ledger(first);
    expect(docs.map((d) => d.eventId).sort()).toEqual(
      Array.from({ length: 20 }, (_, i) => `dup-${i}`).sort(),
    );
    const metrics = first.app.get(OutboxConsumerMetrics).snapshot();
    expect(metrics).toMatchObject({ applied: 20, duplicates: 20, failures: 0 });
    expect(metrics.batches + metrics.batchFallbacks).toBeGreaterThan(0);
    await first.close();
    apps.length = 0;

    // The same 40 messages again, from the start, to a new group: all were applied.
    const before = new Map(calls);
    const replay = await startConsumerApp(db, [BatchedOrders], {}, batched(topic));
    apps.push(replay);
    await waitFor(
      async () => replay.app.get(OutboxConsumerMetrics).snapshot().duplicates >= 40,
      60_000,
      '40 skipped',
    );
    expect(calls).toEqual(before);
    expect(await ledger(replay)).toHaveLength(20);
    expect(replay.app.get(OutboxConsumerMetrics).snapshot()).toMatchObject({
      applied: 0,
      batches: 0,
    });
  }, 150000);
});

/**
 * Two consumer instances (two groups, one database) applying the same events in batches at the
 * same moment: their transactions overlap, the unique `(consumer, eventId)` index aborts the one
 * that commits second (or a write conflict does), and its events end as duplicates. Only real
 * MongoDB runs transactions concurrently; PoppyDB runs one at a time (and binds a transaction to
 * its socket), so the claim cannot be shown there.
 */
describeWith(
  ['real-mongodb', 'kafka'],
  'two consumer instances racing over the same batches apply each event once',
  () => {
    const db = uniqueName('batches-race');
    const topic = uniqueName('batches-race');
    const apps: ConsumerApp[] = [];

    beforeAll(() => createTopics([topic], 1), 60000);
    afterAll(async () => {
      await Promise.all(apps.map((a) => a.close()));
      await dropDatabase(db);
    });

    it('each event applied once, whichever instance wins each batch', async () => {
      await sendTwice(topic, 'race', 200);
      apps.push(
        ...(await Promise.all([
          startConsumerApp(db, [BatchedOrders], {}, batched(topic)),
          startConsumerApp(db, [BatchedOrders], {}, batched(topic)),
        ])),
      );
      const ledgerOf = () =>
        apps[0].connection.collection('ledger').find({ consumer: CONSUMER }).toArray();
      await waitFor(async () => (await ledgerOf()).length >= 200, 90_000, '200 applied');
      await waitFor(
        async () =>
          apps
            .map((a) => a.app.get(OutboxConsumerMetrics).snapshot())
            .reduce((n, m) => n + m.applied + m.duplicates, 0) >= 800,
        90_000,
        'every message ended',
      );
      const ids = (await ledgerOf()).map((d) => d.eventId as string);
      expect(new Set(ids).size).toBe(200);
      expect(ids).toHaveLength(200);
    }, 200000);
  },
);
