import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { IdempotentHandler } from '../../lib';
import { createTopics, describeWith, uniqueName } from '../harness';
import {
  dropDatabase,
  send,
  startConsumerApp,
  waitFor,
  type ConsumerApp,
} from './consumer-app.fixtures';

const PROCESSED = 'outbox_processed_events';
const DEAD_LETTERS = 'outbox_consumer_dead_letters';
const outboxTopic = uniqueName('raw-id-outbox');
const plainTopic = uniqueName('raw-id-plain');
const calls: string[] = [];

@Controller()
class RawIdHandlers {
  @EventPattern(outboxTopic)
  @IdempotentHandler({ consumer: 'raw-id.outbox' })
  viaOutboxServer(@Payload() p: { n: number }, @Ctx() _ctx: KafkaContext) {
    calls.push(`outbox:${p.n}`);
  }

  @EventPattern(plainTopic)
  @IdempotentHandler({ consumer: 'raw-id.plain' })
  viaPlainTransport(@Payload() p: { n: number }, @Ctx() _ctx: KafkaContext) {
    calls.push(`plain:${p.n}`);
  }
}

/** Event ids that Nest's Kafka parser would JSON-decode (they start with `{` or `[`). */
const jsonLikeIds = ['{"id":1}', '{"id":2}', '[1,2]', '[1,3]'];
const messages = () => [
  ...jsonLikeIds.map((ceId, i) => ({
    value: JSON.stringify({ n: i + 1 }),
    headers: { ce_id: ceId },
  })),
  { value: JSON.stringify({ n: 9 }), headers: { ce_id: 'plain-9' } },
];

/**
 * Issue 11, defect 4: an event-id header whose text starts with `{` or `[` is JSON-decoded by
 * Nest's parser, so every such message used to share one id ("[object Object]" or the first
 * array element) and all but the first were skipped as duplicates.
 */
describeWith(['mongodb', 'kafka'], 'event ids from the raw header bytes', () => {
  const db = uniqueName('raw-id');
  let consumer: ConsumerApp | undefined;

  beforeAll(() => createTopics([outboxTopic, plainTopic], 1), 60000);
  afterEach(async () => {
    await consumer?.close();
    consumer = undefined;
  });
  afterAll(() => dropDatabase(db));

  it('OutboxKafkaServer: each id is its exact header text, every event applied once', async () => {
    consumer = await startConsumerApp(
      db,
      [RawIdHandlers],
      {},
      { outboxServerTopics: [outboxTopic] },
    );
    await send(outboxTopic, messages());
    await waitFor(() => calls.includes('outbox:9'), 60_000, 'the last message applied');
    expect(calls.filter((c) => c.startsWith('outbox:'))).toEqual([
      'outbox:1',
      'outbox:2',
      'outbox:3',
      'outbox:4',
      'outbox:9',
    ]);
    const ids = await consumer.connection
      .collection(PROCESSED)
      .find({ consumer: 'raw-id.outbox' })
      .map((d) => d.eventId as string)
      .toArray();
    expect(ids.sort()).toEqual([...jsonLikeIds, 'plain-9'].sort());
  }, 90000);

  it("Nest's Transport.KAFKA: a decoded id is refused (dead-lettered), never shared", async () => {
    consumer = await startConsumerApp(db, [RawIdHandlers]);
    await send(plainTopic, messages());
    await waitFor(() => calls.includes('plain:9'), 60_000, 'the last message applied');
    expect(calls.filter((c) => c.startsWith('plain:'))).toEqual(['plain:9']);
    const dead = await consumer.connection
      .collection(DEAD_LETTERS)
      .find({ consumer: 'raw-id.plain', status: 'dead' })
      .toArray();
    expect(dead.map((d) => d.reason)).toEqual(Array(4).fill('invalid-event-id'));
    expect(dead[0].lastError).toMatch(/OutboxKafkaServer/);
  }, 90000);
});
