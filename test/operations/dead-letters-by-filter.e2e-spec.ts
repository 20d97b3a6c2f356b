import { Types } from 'mongoose';
import { OutboxDeadLetters } from '../../lib';
import { describeWith, readTopic, waitFor } from '../harness';
import { relayTestBed } from '../relay/support/relay-app';

const at = (iso: string) => new Date(`2026-11-${iso}Z`);

/** A dead letter as the relay writes it (see `OutboxDeadLetter`). */
function letter(
  eventId: string,
  aggregateId: string,
  outboxId: Types.ObjectId,
  fields: { eventType?: string; error?: string; deadLetteredAt: Date },
) {
  const error = fields.error ?? 'KafkaJSProtocolError: NOT_ENOUGH_REPLICAS';
  return {
    outboxId,
    eventId,
    eventType: fields.eventType ?? 'OrderPlaced',
    aggregateType: 'Order',
    aggregateId,
    payload: { eventId },
    occurredAt: at('01T10:00:00'),
    reason: 'max-attempts',
    attempts: 10,
    lastError: error,
    errors: [{ at: fields.deadLetteredAt, attempt: 10, error }],
    deadLetteredAt: fields.deadLetteredAt,
  };
}

/**
 * Dead letters listed, counted, requeued and purged by filter. The letters are written in the
 * relay's shape; the requeued events then go through the real relay to the broker.
 */
describeWith(['mongodb', 'kafka'], 'dead letters by filter', () => {
  const bed = relayTestBed('dl-filter');
  let deadLetters: OutboxDeadLetters;
  const ids = Array.from({ length: 6 }, () => new Types.ObjectId());

  beforeAll(async () => {
    deadLetters = bed.writer.app.get(OutboxDeadLetters);
    const db = bed.writer.connection;
    // Dead-lettered in another order than they were committed: a-3 first.
    await db.collection('outbox_dead_letters').insertMany([
      letter('a-3', 'agg-a', ids[2], { deadLetteredAt: at('20T10:00:00') }),
      letter('a-1', 'agg-a', ids[0], { deadLetteredAt: at('20T10:00:02') }),
      letter('b-1', 'agg-b', ids[3], {
        eventType: 'OrderCancelled',
        error: 'Request timed out',
        deadLetteredAt: at('20T10:00:03'),
      }),
      letter('a-2', 'agg-a', ids[1], { deadLetteredAt: at('20T10:00:04') }),
      letter('c-1', 'agg-c', ids[4], {
        error: 'KafkaJSProtocolError: MESSAGE_TOO_LARGE',
        deadLetteredAt: at('02T08:00:00'),
      }),
    ]);
    // A move to the dead letters that was interrupted: still in the outbox, marked dead.
    await db.collection('outbox').insertOne({
      _id: ids[5],
      eventId: 'd-1',
      eventType: 'OrderPlaced',
      aggregateType: 'Order',
      aggregateId: 'agg-d',
      payload: { eventId: 'd-1' },
      occurredAt: at('01T10:00:00'),
      status: 'dead',
      attempts: 10,
      deadLetter: { reason: 'max-attempts', error: 'boom', attempts: 10, at: at('20T10:00:05') },
    });
  });

  it('lists and counts by event type, aggregate, error text and time range', async () => {
    expect(await deadLetters.count()).toBe(5);
    expect(await deadLetters.count({ eventType: 'OrderCancelled' })).toBe(1);
    expect(await deadLetters.count({ eventType: ['OrderCancelled', 'OrderPlaced'] })).toBe(5);
    expect((await deadLetters.list({ aggregateId: 'agg-a' })).map((l) => l.eventId)).toEqual([
      'a-3',
      'a-1',
      'a-2',
    ]);
    expect((await deadLetters.list({ error: 'timed OUT' })).map((l) => l.eventId)).toEqual(['b-1']);
    expect(
      (await deadLetters.list({ since: at('03T00:00:00'), until: at('20T10:00:03') })).map(
        (l) => l.eventId,
      ),
    ).toEqual(['a-3', 'a-1']);
    expect(await deadLetters.list({}, 2)).toHaveLength(2);
  });

  it('purges by filter, and a dry run only counts', async () => {
    const filter = { error: 'MESSAGE_TOO_LARGE' };
    expect(await deadLetters.purge(filter, { dryRun: true })).toEqual({
      dryRun: true,
      matched: 1,
      deleted: 0,
    });
    expect(await deadLetters.count()).toBe(5);
    expect(await deadLetters.purge(filter)).toEqual({ dryRun: false, matched: 1, deleted: 1 });
    expect(await deadLetters.count()).toBe(4);
  });

  it('a dry-run requeue lists what it would requeue, in aggregate order, and changes nothing', async () => {
    const result = await deadLetters.requeueMany({ aggregateType: 'Order' }, { dryRun: true });
    expect(result).toMatchObject({ dryRun: true, requeued: 0, failed: [] });
    expect(result.eventIds).toEqual(['a-1', 'a-2', 'a-3', 'b-1', 'd-1']);
    const some = await deadLetters.requeueMany({ eventIds: ['b-1', 'a-2'] }, { dryRun: true });
    expect(some.eventIds).toEqual(['a-2', 'b-1']);
    expect(await deadLetters.count()).toBe(4);
    expect(
      await bed.writer.connection.collection('outbox').countDocuments({ status: 'dead' }),
    ).toBe(1);
  });

  it('requeues by filter in bounded batches: same event ids, each aggregate in its order, through the relay', async () => {
    const result = await deadLetters.requeueMany({ aggregateType: 'Order' }, { batchSize: 2 });
    expect(result).toEqual({
      dryRun: false,
      requeued: 5,
      eventIds: ['a-1', 'a-2', 'a-3', 'b-1', 'd-1'],
      failed: [],
      batches: 3,
    });
    expect(await deadLetters.count()).toBe(0);
    const outbox = bed.writer.connection.collection('outbox');
    expect(await outbox.countDocuments({ status: 'pending' })).toBe(5);

    await bed.startRelay();
    const records = await readTopic(bed.topic, { count: 5, timeoutMs: 60_000 });
    const byKey = (key: string) => records.filter((r) => r.key === key).map((r) => r.headers.ce_id);
    expect(byKey('agg-a')).toEqual(['a-1', 'a-2', 'a-3']);
    expect(byKey('agg-b')).toEqual(['b-1']);
    expect(byKey('agg-d')).toEqual(['d-1']);
    await waitFor(
      async () => (await outbox.countDocuments({ status: 'published' })) === 5,
      30_000,
      'the requeued events marked published',
    );
    expect(await deadLetters.requeueMany({ aggregateType: 'Order' })).toMatchObject({
      requeued: 0,
      batches: 0,
    });
  });

  it('reports an event it cannot requeue and requeues the others', async () => {
    const db = bed.writer.connection;
    await db.collection('outbox_dead_letters').insertMany([
      {
        ...letter('x-1', 'inv-1', new Types.ObjectId(), { deadLetteredAt: at('21T10:00:00') }),
        aggregateType: 'Invoice',
      },
      {
        ...letter('x-2', 'inv-2', new Types.ObjectId(), { deadLetteredAt: at('21T10:00:01') }),
        aggregateType: 'Invoice',
      },
    ]);
    // x-1's event id is taken in the outbox (unique index): it cannot go back.
    await db.collection('outbox').insertOne({
      eventId: 'x-1',
      eventType: 'OrderPlaced',
      aggregateType: 'Invoice',
      aggregateId: 'inv-1',
      payload: {},
      occurredAt: new Date(),
      status: 'published',
      attempts: 1,
    });
    const result = await deadLetters.requeueMany({ aggregateType: 'Invoice' });
    expect(result.eventIds).toEqual(['x-2']);
    expect(result.failed).toEqual([
      { eventId: 'x-1', error: expect.stringMatching(/E11000|duplicate/i) },
    ]);
    expect((await deadLetters.list({ aggregateType: 'Invoice' })).map((l) => l.eventId)).toEqual([
      'x-1',
    ]);
  });
});
