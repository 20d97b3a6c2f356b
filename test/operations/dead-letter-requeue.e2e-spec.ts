import { Types } from 'mongoose';
import { OutboxDeadLetterNotFoundError, OutboxDeadLetters } from '../../lib';
import { alterTopic, createTopics, describeWith, readTopic, uniqueName } from '../harness';
import { relayTestBed, waitFor } from '../relay/support/relay-app';

/**
 * An event the broker refuses for good (larger than the topic's `max.message.bytes`) is
 * dead-lettered at once; once the topic accepts it, `OutboxDeadLetters.requeue` puts it back
 * and the relay publishes it with the same eventId.
 */
describeWith(['mongodb', 'kafka'], 'requeueing a dead-lettered event', () => {
  const bed = relayTestBed('requeue', { createTopic: false });

  beforeAll(async () => {
    await createTopics([bed.topic], 1, { 'max.message.bytes': '2048' });
    await bed.startRelay();
  });

  it('publishes the requeued event once its topic accepts it, and removes the dead letter', async () => {
    const eventId = uniqueName('big');
    await bed.writer.connection.collection('outbox').insertOne({
      _id: new Types.ObjectId(),
      eventId,
      eventType: 'OrderPlaced',
      aggregateType: 'Order',
      aggregateId: 'agg-1',
      payload: { blob: 'x'.repeat(8_000) },
      occurredAt: new Date(),
      status: 'pending',
      attempts: 0,
    });
    const deadLetters = bed.writer.app.get(OutboxDeadLetters);
    await waitFor(async () => (await deadLetters.list()).length === 1, 60_000, 'the dead letter');
    const [letter] = await deadLetters.list({ aggregateId: 'agg-1' });
    expect(letter).toMatchObject({
      eventId,
      aggregateId: 'agg-1',
      reason: 'rejected',
      attempts: 1,
    });
    expect(letter.errors.at(-1)?.error).toMatch(/TOO_LARGE/);
    await waitFor(
      async () => (await bed.writer.connection.collection('outbox').countDocuments()) === 0,
      30_000,
      'the event removed from the outbox',
    );

    await alterTopic(bed.topic, { 'max.message.bytes': '1048588' });
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
