import { OutboxDeadLetters, OutboxRelay } from '../../lib';
import { createTopics, describeWith, readTopic, waitFor } from '../harness';
import { relayTestBed } from './support/relay-app';

/**
 * Defect: an event whose topic did not exist yet (created after the deploy, or metadata lag) was
 * dead-lettered after ~10 s. The topic is held back, said so, and its events published once it
 * exists; nothing is dead-lettered and no attempt is counted.
 */
describeWith(['mongodb', 'kafka'], 'an event for a topic created late', () => {
  const bed = relayTestBed('late-topic', { createTopic: false });

  it('waits (held, pending, no attempt) and is published once the topic exists', async () => {
    const relay = await bed.startRelay();
    await bed.writer.orders.place('o-1', 'agg-1', 1);
    await bed.writer.orders.place('o-2', 'agg-1', 2);
    const status = () => relay.app.get(OutboxRelay).status();
    await waitFor(
      async () => status().heldDestinations.some((hold) => hold.destination === bed.topic),
      60_000,
      'the topic held back',
    );
    const outbox = bed.writer.connection.collection('outbox');
    expect(await outbox.countDocuments({ status: 'pending' })).toBe(2);
    expect(await outbox.countDocuments({ attempts: { $gt: 0 } })).toBe(0);
    expect(await bed.writer.app.get(OutboxDeadLetters).list()).toEqual([]);

    await createTopics([bed.topic]);
    const records = await readTopic(bed.topic, { count: 2, timeoutMs: 60_000 });
    expect(records.map((record) => JSON.parse(record.value ?? 'null').seq)).toEqual([1, 2]);
    await waitFor(
      async () => (await outbox.countDocuments({ status: 'published' })) === 2,
      30_000,
      'both marked',
    );
    expect(status().heldDestinations).toEqual([]);
    expect(await bed.writer.app.get(OutboxDeadLetters).list()).toEqual([]);
  });
});
