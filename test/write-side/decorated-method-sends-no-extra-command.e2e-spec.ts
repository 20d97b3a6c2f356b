import { Injectable, Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { getConnectionToken, InjectModel, MongooseModule } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import type { Connection, Model } from 'mongoose';
import { v7 as uuidv7 } from 'uuid';
import { EmitsEvent, OutboxModule, Transactional } from '../../lib';
import type { OutboxModuleOptions } from '../../lib';
import { getOutboxEventModel } from '../../lib/documents/outbox-event.schema';
import { describeWith, mongoUriFor, uniqueName } from '../harness';
import { CommandRecorder } from '../harness/command-recorder';
import { Order, OrderSchema } from './write-side.fixtures';

/*
 * The commands a decorated method sends, as the driver's command monitoring sees them, against
 * a hand-written `session.withTransaction` doing the same writes: the same, plus what each option
 * documents (docs/writing-events.md). A change that adds a round trip to the write path fails
 * here. The lists are what the driver sends, whatever the server answers, so they hold on
 * PoppyDB as on mongod.
 */

const orderEvent = {
  aggregateType: 'Order',
  aggregateId: (order: Order) => order._id,
  payload: (order: Order) => ({ total: order.total }),
};

@Injectable()
class PlaceOrders {
  constructor(@InjectModel(Order.name) private readonly orders: Model<Order>) {}

  @EmitsEvent<Order>('OrderPlaced', orderEvent)
  async place(id: string, total: number): Promise<Order> {
    await this.orders.create([{ _id: id, total }]);
    return { _id: id, total };
  }

  @EmitsEvent<Order>('OrderPlaced', { ...orderEvent, waitForScheduled: false })
  async placeNotWaiting(id: string, total: number): Promise<Order> {
    await this.orders.create([{ _id: id, total }]);
    return { _id: id, total };
  }

  /** Two events of one aggregate and one of another. */
  @EmitsEvent<Order>('OrderPlaced', orderEvent)
  @EmitsEvent<Order>('OrderPriced', orderEvent)
  @EmitsEvent<Order>('CustomerOrdered', {
    aggregateType: 'Customer',
    aggregateId: 'c-1',
    payload: (order) => ({ orderId: order._id }),
  })
  async placeForCustomer(id: string, total: number): Promise<Order> {
    await this.orders.create([{ _id: id, total }]);
    return { _id: id, total };
  }

  @EmitsEvent<Order>('OrderPlaced', orderEvent)
  async placeThenFail(id: string, total: number): Promise<Order> {
    await this.orders.create([{ _id: id, total }]);
    throw new Error('refused');
  }

  @Transactional()
  async placeWithoutEvent(id: string, total: number): Promise<void> {
    await this.orders.create([{ _id: id, total }]);
  }

  /** Its own write, then a decorated call that joins its transaction. */
  @Transactional()
  async placeTwo(id: string, total: number): Promise<void> {
    await this.orders.create([{ _id: `${id}-outer`, total }]);
    await this.place(id, total);
  }
}

@Module({
  imports: [MongooseModule.forFeature([{ name: Order.name, schema: OrderSchema }])],
  providers: [PlaceOrders],
})
class PlaceOrdersModule {}

interface Harness {
  service: PlaceOrders;
  recorder: CommandRecorder;
  /** What a careful user writes without the library: the order, then `events` outbox rows. */
  handWritten(id: string, total: number, events: number, fail?: boolean): Promise<void>;
  close(): Promise<void>;
}

async function start(options: OutboxModuleOptions): Promise<Harness> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      MongooseModule.forRoot(mongoUriFor(uniqueName('cmd')), { monitorCommands: true }),
      OutboxModule.forRoot({ isGlobal: true, relay: false, ...options }),
      PlaceOrdersModule,
    ],
  }).compile();
  const app: INestApplicationContext = await moduleRef.init();
  const connection = app.get<Connection>(getConnectionToken());
  const orders = connection.model<Order>(Order.name);
  // Its collection and indexes (autoCreate, autoIndex) are made now, not in a recorded call.
  await orders.init();
  const outbox = getOutboxEventModel(connection, 'outbox');
  const recorder = new CommandRecorder(connection.getClient());
  return {
    service: app.get(PlaceOrders),
    recorder,
    async handWritten(id, total, events, fail = false) {
      const session = await connection.startSession();
      try {
        await session.withTransaction(async () => {
          await orders.create([{ _id: id, total }], { session });
          if (fail) throw new Error('refused');
          await outbox.insertMany(
            Array.from({ length: events }, (_, i) => ({
              eventId: uuidv7(),
              eventType: 'OrderPlaced',
              aggregateType: 'Order',
              aggregateId: `${id}-${i}`,
              payload: { total },
              occurredAt: new Date(),
              status: 'pending',
              attempts: 0,
            })),
            { session, lean: true },
          );
        });
      } finally {
        await session.endSession();
      }
    },
    async close() {
      recorder.detach();
      await connection.dropDatabase().catch(() => undefined);
      await app.close();
    },
  };
}

/** The hand-written transaction's commands: its two inserts, then the commit. */
const HAND_WRITTEN = ['insert', 'insert', 'commitTransaction'];

describeWith(['mongodb'], 'decorated method: default options', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await start({});
  });
  afterAll(async () => {
    await h?.close();
  });

  it('the hand-written transaction sends its two inserts and the commit', async () => {
    expect(await h.recorder.record(() => h.handWritten('hw-1', 1, 1))).toEqual(HAND_WRITTEN);
  });

  it('@EmitsEvent sends exactly what the hand-written transaction sends', async () => {
    const hand = await h.recorder.record(() => h.handWritten('hw-2', 1, 1));
    const decorated = await h.recorder.record(() => h.service.place('d-2', 1));
    expect(decorated).toEqual(hand);
  });

  it('three events of two aggregates still cost one insert', async () => {
    const hand = await h.recorder.record(() => h.handWritten('hw-3', 1, 3));
    expect(await h.recorder.record(() => h.service.placeForCustomer('d-3', 1))).toEqual(hand);
  });

  it('@Transactional without an event sends the body and the commit, nothing more', async () => {
    expect(await h.recorder.record(() => h.service.placeWithoutEvent('d-4', 1))).toEqual([
      'insert',
      'commitTransaction',
    ]);
  });

  it('a decorated call inside another joins its transaction: one outbox insert, one commit', async () => {
    expect(await h.recorder.record(() => h.service.placeTwo('d-6', 1))).toEqual([
      'insert',
      'insert',
      'insert',
      'commitTransaction',
    ]);
  });

  it('a body that throws sends its writes and the abort, as the hand-written one does', async () => {
    const hand = await h.recorder.record(() =>
      expect(h.handWritten('hw-5', 1, 1, true)).rejects.toThrow('refused'),
    );
    const decorated = await h.recorder.record(() =>
      expect(h.service.placeThenFail('d-5', 1)).rejects.toThrow('refused'),
    );
    expect(hand).toEqual(['insert', 'abortTransaction']);
    expect(decorated).toEqual(hand);
  });
});

describeWith(['mongodb'], 'decorated method: scheduledEvents', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await start({ scheduledEvents: true });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('costs one aggregate (the schedule read) before the outbox insert', async () => {
    expect(await h.recorder.record(() => h.handWritten('hw-1', 1, 1))).toEqual(HAND_WRITTEN);
    expect(await h.recorder.record(() => h.service.place('d-1', 1))).toEqual([
      'insert',
      'aggregate',
      'insert',
      'commitTransaction',
    ]);
  });

  it('one aggregate for all the events of a transaction, whatever their aggregates', async () => {
    expect(await h.recorder.record(() => h.service.placeForCustomer('d-2', 1))).toEqual([
      'insert',
      'aggregate',
      'insert',
      'commitTransaction',
    ]);
  });

  it('none when no event waits for scheduled ones (waitForScheduled: false, no delayMs)', async () => {
    expect(await h.recorder.record(() => h.service.placeNotWaiting('d-3', 1))).toEqual(
      HAND_WRITTEN,
    );
  });
});

describeWith(['mongodb'], 'decorated method: aggregateSequence', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await start({ aggregateSequence: true });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('costs one findAndModify (the counter) before the outbox insert', async () => {
    expect(await h.recorder.record(() => h.handWritten('hw-1', 1, 1))).toEqual(HAND_WRITTEN);
    expect(await h.recorder.record(() => h.service.place('d-1', 1))).toEqual([
      'insert',
      'findAndModify',
      'insert',
      'commitTransaction',
    ]);
  });

  it('one findAndModify per aggregate, not per event', async () => {
    expect(await h.recorder.record(() => h.service.placeForCustomer('d-2', 1))).toEqual([
      'insert',
      'findAndModify',
      'findAndModify',
      'insert',
      'commitTransaction',
    ]);
  });
});

describeWith(['mongodb'], 'decorated method: scheduledEvents and aggregateSequence', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await start({ scheduledEvents: true, aggregateSequence: true });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('the schedule read, then the counter, then the outbox insert', async () => {
    expect(await h.recorder.record(() => h.service.place('d-1', 1))).toEqual([
      'insert',
      'aggregate',
      'findAndModify',
      'insert',
      'commitTransaction',
    ]);
  });
});
