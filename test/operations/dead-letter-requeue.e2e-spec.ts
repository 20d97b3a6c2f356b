import { OutboxDeadLetterNotFoundError, OutboxDeadLetters } from '../../lib';
import { createTopics, describeWith, readTopic } from '../harness';
import { relayTestBed, waitFor } from '../relay/support/relay-app';

/**
 * An event whose topic does not exist is dead-lettered at once; after the topic is created,
 * `OutboxDeadLetters.requeue` puts it back and the relay publishes it with the same eventId.
 */
describeWith(['mongodb', 'kafka'], 'requeueing a dead-lettered event', () => {
  const bed = relayTestBed('requeue', { createTopic: false });

  beforeAll(async () => {
    await bed.startRelay();
  });

  it('publishes the requeued event once its topic exists, and removes the dead letter', async () => {
    await bed.writer.orders.place('o-1', 'agg-1', 1);
    const deadLetters = bed.writer.app.get(OutboxDeadLetters);
    await waitFor(async () => (await deadLetters.list()).length === 1, 60_000, 'the dead letter');
    const [letter] = await deadLetters.list({ aggregateId: 'agg-1' });
    expect(letter).toMatchObject({ aggregateId: 'agg-1', eventType: 'OrderPlaced' });
    expect(letter.errors.length).toBeGreaterThan(0);
    expect(await bed.writer.connection.collection('outbox').countDocuments()).toBe(0);

    await createTopics([bed.topic]);
    await deadLetters.requeue(letter.eventId);
    expect(await deadLetters.list()).toEqual([]);

    const [record] = await readTopic(bed.topic, { count: 1, timeoutMs: 60_000 });
    expect(record).toMatchObject({ key: 'agg-1', headers: { ce_id: letter.eventId } });
    await waitFor(
      async () =>
        (await bed.writer.connection
          .collection('outbox')
          .countDocuments({ status: 'published' })) === 1,
      30_000,
      'the requeued event marked published',
    );
  });

  it('requeueing an unknown event id is a typed error', async () => {
    await expect(bed.writer.app.get(OutboxDeadLetters).requeue('nope')).rejects.toBeInstanceOf(
      OutboxDeadLetterNotFoundError,
    );
  });
});
