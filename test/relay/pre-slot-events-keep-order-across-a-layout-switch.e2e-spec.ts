import { Types } from 'mongoose';
import type { OutboxEventRecord } from '../../lib';
import { describeWith, uniqueName, waitFor } from '../harness';
import { readAllAfterDrain, relayTestBed, testRelayOptions } from './support/relay-app';
import type { RelayTestApp } from './support/relay-app';

jest.setTimeout(120_000);

const PARTITIONS = 4;
const AGGREGATE = 'pre-slot-order';

/**
 * A rolling deploy from one partition to four while a writer of a version before slots still
 * runs: an event it wrote (no `slot`) is pending when the new relay switches the layout, the
 * current writer then emits for the same aggregate (with a slot), the old writer once more, the
 * current one again. The aggregate's events reach Kafka in commit order, although its partition
 * sees the unslotted ones neither in its slot-range reads nor in its slot-filtered stream until
 * they are stamped: the drain stamps first, and the stream also carries inserts without a slot.
 * The sweep (and the periodic stamping of partition 0's owner) is made slow, so that neither
 * could put them in order by chance.
 *
 * Commit order needs real MongoDB: PoppyDB emits a transaction's change events before its
 * commit, so the relay may find the current writer's event not yet pending when its change
 * event arrives, leave it to the sweep, and publish it after later ones (measured: 1, 3, 4, 2).
 * On any replica set, the store contract (`rangeUnslotted`) and the simulation
 * (pre-slot-drain.simulation.spec.ts) prove the drain's part of this order.
 */
describeWith(
  ['real-mongodb', 'kafka'],
  'events written before slots keep their order across a layout switch',
  () => {
    const bed = relayTestBed('pre-slot');
    const order: string[] = [];

    /** An older writer's insert: the document as a version before slots wrote it. */
    const insertWithoutSlot = async (n: number): Promise<void> => {
      const event: OutboxEventRecord = {
        _id: new Types.ObjectId(),
        eventId: uniqueName(`evt-pre-slot-${n}`),
        eventType: 'OrderPlaced',
        aggregateType: 'Order',
        aggregateId: AGGREGATE,
        payload: { n },
        occurredAt: new Date(),
        status: 'pending',
        attempts: 0,
      };
      await bed.writer.connection.collection('outbox').insertOne(event as never);
      order.push(event.eventId);
    };

    /** The current writer's emit (the event carries its slot). */
    const placeWithSlot = async (n: number): Promise<void> => {
      await bed.writer.orders.place(uniqueName(`o-${n}`), AGGREGATE, n);
      const [doc] = await bed.writer.connection
        .collection('outbox')
        .find({ aggregateId: AGGREGATE, 'payload.seq': n })
        .toArray();
      expect(doc.slot).toEqual(expect.any(Number));
      order.push(doc.eventId as string);
    };

    const holdsEveryPartition = (relay: RelayTestApp) => () =>
      Promise.resolve(
        relay.relay!.status().partitions?.filter((partition) => partition.owned).length ===
          PARTITIONS,
      );

    it('publishes the aggregate’s events in commit order, whichever version wrote them', async () => {
      await insertWithoutSlot(1);
      const relay = await bed.startRelay(
        testRelayOptions(bed.prefix, {
          partitions: PARTITIONS,
          sweepIntervalMs: 3_000,
          sweepGraceMs: 3_000,
        }),
      );
      await waitFor(
        holdsEveryPartition(relay),
        30_000,
        `the relay to hold ${PARTITIONS} partitions`,
      );
      await placeWithSlot(2);
      await insertWithoutSlot(3);
      await placeWithSlot(4);

      const records = await readAllAfterDrain(bed.writer.connection, bed.topic, 30_000, 3_000);
      const firsts: string[] = [];
      for (const record of records) {
        const id = record.headers.ce_id;
        if (record.key === AGGREGATE && !firsts.includes(id)) firsts.push(id);
      }
      expect(firsts).toEqual(order);
    });
  },
);
