import { Logger } from '@nestjs/common';
import { OutboxDeadLetterNotFoundError, OutboxDeadLetters } from '../../lib';
import { createTopics, describeWith, readTopic, uniqueName } from '../harness';
import {
  startRelayApp,
  testLogLevels,
  testRelayOptions,
  waitFor,
} from '../relay/support/relay-app';
import type { RelayTestApp } from '../relay/support/relay-app';

/**
 * An event whose topic does not exist is dead-lettered at once; after the topic is created,
 * `OutboxDeadLetters.requeue` puts it back and the relay publishes it with the same eventId.
 */
describeWith(['mongodb', 'kafka'], 'requeueing a dead-lettered event', () => {
  let writer: RelayTestApp;
  let relay: RelayTestApp;
  let prefix: string;

  beforeAll(async () => {
    Logger.overrideLogger(testLogLevels());
    const db = uniqueName('dlq-requeue');
    prefix = `${uniqueName('requeue')}.`;
    writer = await startRelayApp(db, false);
    relay = await startRelayApp(db, testRelayOptions(prefix));
  });
  afterAll(async () => {
    await relay?.close();
    await writer?.connection.dropDatabase().catch(() => undefined);
    await writer?.close();
  });

  it('publishes the requeued event once its topic exists, and removes the dead letter', async () => {
    await writer.orders.place('o-1', 'agg-1', 1);
    const deadLetters = writer.app.get(OutboxDeadLetters);
    await waitFor(async () => (await deadLetters.list()).length === 1, 60_000, 'the dead letter');
    const [letter] = await deadLetters.list({ aggregateId: 'agg-1' });
    expect(letter).toMatchObject({ aggregateId: 'agg-1', eventType: 'OrderPlaced' });
    expect(letter.errors.length).toBeGreaterThan(0);
    expect(await writer.connection.collection('outbox').countDocuments()).toBe(0);

    await createTopics([`${prefix}Order`]);
    await deadLetters.requeue(letter.eventId);
    expect(await deadLetters.list()).toEqual([]);

    const [record] = await readTopic(`${prefix}Order`, { count: 1, timeoutMs: 60_000 });
    expect(record).toMatchObject({ key: 'agg-1', headers: { ce_id: letter.eventId } });
    await waitFor(
      async () =>
        (await writer.connection.collection('outbox').countDocuments({ status: 'published' })) ===
        1,
      30_000,
      'the requeued event marked published',
    );
  });

  it('requeueing an unknown event id is a typed error', async () => {
    await expect(writer.app.get(OutboxDeadLetters).requeue('nope')).rejects.toBeInstanceOf(
      OutboxDeadLetterNotFoundError,
    );
  });
});
