import { Injectable, Module } from '@nestjs/common';
import type { DynamicModule, INestApplicationContext } from '@nestjs/common';
import {
  getConnectionToken,
  InjectModel,
  MongooseModule,
  Prop,
  Schema,
  SchemaFactory,
} from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import type { Connection, Model } from 'mongoose';
import { EmitsEvent, OutboxEmitter, OutboxModule, Transactional } from '../../lib';
import type { OutboxEventInput, OutboxEventRecord, OutboxModuleOptions } from '../../lib';
import { mongoUriFor, uniqueName } from '../harness';

@Schema({ collection: 'orders', versionKey: false })
export class Order {
  @Prop({ required: true })
  _id!: string;

  @Prop({ required: true })
  total!: number;
}
export const OrderSchema = SchemaFactory.createForClass(Order);

@Schema({ collection: 'counters', versionKey: false })
export class Counter {
  @Prop({ required: true })
  _id!: string;

  @Prop({ required: true, default: 0 })
  value!: number;
}
export const CounterSchema = SchemaFactory.createForClass(Counter);

/** A domain service as users write it: plain provider methods, models without sessions. */
@Injectable()
export class OrderService {
  /** How many times a transaction body ran (retries included). */
  bodyRuns = 0;

  constructor(
    @InjectModel(Order.name) private readonly orders: Model<Order>,
    @InjectModel(Counter.name) private readonly counters: Model<Counter>,
    private readonly emitter: OutboxEmitter,
  ) {}

  @EmitsEvent<Order>('OrderCreated', {
    aggregateType: 'Order',
    aggregateId: (order) => order._id,
    payload: (order) => ({ orderId: order._id, total: order.total, at: new Date(0) }),
    headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  })
  async create(id: string, total: number): Promise<Order> {
    const [order] = await this.orders.create([{ _id: id, total }]);
    return order.toObject();
  }

  /** Emits events decided in the body. */
  @Transactional()
  async createWith(id: string, events: OutboxEventInput[]): Promise<void> {
    await this.orders.create([{ _id: id, total: 1 }]);
    this.emitter.emit(events);
  }

  @Transactional()
  async createThenFail(id: string, error: Error): Promise<void> {
    await this.create(id, 5);
    throw error;
  }

  /** Outer call: its own write, then a nested @EmitsEvent call, then a nested one that throws. */
  @Transactional()
  async outerWithFailingInner(id: string): Promise<void> {
    await this.orders.create([{ _id: `${id}-outer`, total: 1 }]);
    await this.create(`${id}-inner`, 2);
    await this.createThenFail(`${id}-inner2`, new Error('inner failed'));
  }

  @Transactional()
  async outerWithInner(id: string): Promise<void> {
    await this.orders.create([{ _id: `${id}-outer`, total: 1 }]);
    await this.create(`${id}-inner`, 2);
  }

  /**
   * Increments one shared counter, waits while holding the write (so concurrent calls conflict
   * and MongoDB aborts them with TransientTransactionError), then emits one event.
   */
  @Transactional()
  async bump(callId: string, holdMs: number): Promise<void> {
    this.bodyRuns++;
    await this.counters.updateOne({ _id: 'shared' }, { $inc: { value: 1 } }, { upsert: true });
    await new Promise((resolve) => setTimeout(resolve, holdMs));
    this.emitter.emit({
      eventType: 'CounterBumped',
      aggregateType: 'Counter',
      aggregateId: 'shared',
      payload: { callId },
    });
  }
}

@Module({
  imports: [
    MongooseModule.forFeature([
      { name: Order.name, schema: OrderSchema },
      { name: Counter.name, schema: CounterSchema },
    ]),
  ],
  providers: [OrderService],
})
export class OrdersModule {}

export interface WriteSideApp {
  app: INestApplicationContext;
  orders: OrderService;
  connection: Connection;
  outbox(): Promise<OutboxEventRecord[]>;
  orderIds(): Promise<string[]>;
  close(): Promise<void>;
}

/** A real app: MongooseModule on a fresh database, OutboxModule (relay off), the orders module. */
export async function startWriteSideApp(
  options: OutboxModuleOptions = {},
  outboxModule: DynamicModule = OutboxModule.forRoot({ isGlobal: true, relay: false, ...options }),
): Promise<WriteSideApp> {
  const moduleRef = await Test.createTestingModule({
    imports: [MongooseModule.forRoot(mongoUriFor(uniqueName('ws'))), outboxModule, OrdersModule],
  }).compile();
  const app = await moduleRef.init();
  const connection = app.get<Connection>(getConnectionToken());
  const collection = options.collections?.outbox ?? 'outbox';
  return {
    app,
    orders: app.get(OrderService),
    connection,
    outbox: () =>
      connection
        .collection<OutboxEventRecord>(collection)
        .find({}, { sort: { _id: 1 } })
        .toArray() as Promise<OutboxEventRecord[]>,
    orderIds: async () =>
      (
        await connection
          .collection('orders')
          .find({}, { sort: { _id: 1 } })
          .toArray()
      ).map((o) => String(o._id)),
    close: async () => {
      await connection.dropDatabase().catch(() => undefined);
      await app.close();
    },
  };
}

export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
