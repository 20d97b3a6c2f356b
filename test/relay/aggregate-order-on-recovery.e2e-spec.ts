import { Types } from 'mongoose';
import { OUTBOX_DEFAULT_COLLECTIONS } from '../../lib/common/outbox-storage.options';
import { MongoOutboxRelayStore } from '../../lib/relay/mongo/mongo-outbox-relay.store';
import type { OutboxEventRecord } from '../../lib';
import { describeWith, uniqueName } from '../harness';
import { readAllAfterDrain, relayTestBed } from './support/relay-app';

jest.setTimeout(120_000);

/**
 * With several writer processes, `_id` order within one second is not insertion order; with
 * `aggregateSequence` the stamped sequence is commit order. The recovery paths (drain, catch-up)
 * must follow it. The events are inserted directly, with `_id` order contradicting `sequence`.
 */
describeWith(['mongodb', 'kafka'], 'the recovery paths follow aggregate order', () => {
  const bed = relayTestBed('order');
  const sequenced: OutboxEventRecord[] = [];
  const plain: OutboxEventRecord[] = [];

  const make = (aggregateId: string, n: number, sequence?: number): OutboxEventRecord => ({
    _id: new Types.ObjectId(),
    eventId: uniqueName(`evt-${aggregateId}-${n}`),
    eventType: 'OrderPlaced',
    aggregateType: 'Order',
    aggregateId,
    payload: { n },
    occurredAt: new Date(),
    status: 'pending',
    attempts: 0,
    ...(sequence === undefined ? {} : { sequence }),
  });

  beforeAll(async () => {
    // _ids ascending, sequences 3, 1, 4, 2: insertion (_id) order is not commit order.
    [3, 1, 4, 2].forEach((sequence, n) => sequenced.push(make('seq-1', n, sequence)));
    for (let n = 0; n < 3; n++) plain.push(make('plain-1', n));
    await bed.writer.connection
      .collection('outbox')
      .insertMany([...sequenced, ...plain] as never[]);
  });

  it('the store reads an aggregate by sequence, then _id; the drain goes aggregate by aggregate', async () => {
    const store = new MongoOutboxRelayStore(bed.writer.connection.db!, OUTBOX_DEFAULT_COLLECTIONS);
    const ofAggregate = await store.findPendingOfAggregates(
      [{ aggregateType: 'Order', aggregateId: 'seq-1' }],
      10,
    );
    expect(ofAggregate.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);

    const drained: OutboxEventRecord[] = [];
    for (;;) {
      const page = await store.findPendingPage(drained.at(-1), 2);
      if (page.length === 0) break;
      drained.push(...page);
    }
    expect(drained.map((e) => `${e.aggregateId}:${e.sequence ?? String(e._id)}`)).toEqual([
      ...plain.map((e) => `plain-1:${String(e._id)}`),
      'seq-1:1',
      'seq-1:2',
      'seq-1:3',
      'seq-1:4',
    ]);
  });

  it('a relay draining the collection publishes each aggregate in its order', async () => {
    await bed.startRelay();
    const records = await readAllAfterDrain(bed.writer.connection, bed.topic, 60_000, 4000);
    const seq = records.filter((r) => r.key === 'seq-1');
    expect(seq.map((r) => r.headers.ce_sequence)).toEqual(['1', '2', '3', '4']);
    expect(seq.map((r) => r.headers.ce_id)).toEqual(
      [...sequenced].sort((a, b) => a.sequence! - b.sequence!).map((e) => e.eventId),
    );
    const unsequenced = records.filter((r) => r.key === 'plain-1');
    expect(unsequenced.map((r) => r.headers.ce_id)).toEqual(plain.map((e) => e.eventId));
    expect(unsequenced.every((r) => r.headers.ce_sequence === undefined)).toBe(true);
  });
});
