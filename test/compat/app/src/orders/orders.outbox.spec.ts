import { getModelToken } from '@nestjs/mongoose';
import { Test, type TestingModule } from '@nestjs/testing';
import { OutboxTesting, OutboxTestingModule } from 'nestjs-outbox/testing';
import { OrderSummariesController } from '../summaries/order-summaries.controller.js';
import { ORDER_SUMMARY_MODEL } from '../summaries/order-summary.schema.js';
import { ORDER_MODEL, type Order } from './order.schema.js';
import { OrdersService } from './orders.service.js';

// The app's own service and handler, with OutboxTestingModule instead of MongoDB and Kafka: the
// models are doubles that record what they were asked to write.
describe('placing an order, with nestjs-outbox/testing', () => {
  let moduleRef: TestingModule;
  let outbox: OutboxTesting;
  let summaryWrites: Array<{ orderId: string }>;

  beforeEach(async () => {
    summaryWrites = [];
    const orders = {
      create: async (docs: Order[]) => docs.map((doc) => ({ toObject: () => doc })),
    };
    const summaries = {
      updateOne: async (filter: { orderId: string }) => {
        summaryWrites.push(filter);
        return { acknowledged: true };
      },
    };
    moduleRef = await Test.createTestingModule({
      imports: [OutboxTestingModule.forRoot()],
      controllers: [OrderSummariesController],
      providers: [
        OrdersService,
        { provide: getModelToken(ORDER_MODEL), useValue: orders },
        { provide: getModelToken(ORDER_SUMMARY_MODEL), useValue: summaries },
      ],
    }).compile();
    await moduleRef.init();
    outbox = moduleRef.get(OutboxTesting);
  });

  afterEach(async () => {
    await moduleRef.close();
  });

  it('commits OrderPlaced with the order', async () => {
    const order = await moduleRef.get(OrdersService).place('ada', 25);

    const event = outbox.expectEmitted('OrderPlaced', { aggregateId: order._id }, 1);
    expect(event).toMatchObject({
      aggregateType: 'Order',
      payload: { orderId: order._id, customerId: 'ada', total: 25 },
    });
    outbox.expectNotEmitted('OrderCancelled');
  });

  it('the @IdempotentHandler applies it once, also when Kafka delivers it again', async () => {
    const order = await moduleRef.get(OrdersService).place('ada', 25);

    await outbox.drain();
    expect(summaryWrites).toEqual([{ orderId: order._id }]);

    outbox.redeliver(outbox.expectEmitted('OrderPlaced').eventId);
    await outbox.drain();
    expect(summaryWrites).toHaveLength(1);
    expect(outbox.consumerDeadLetters()).toEqual([]);
  });
});
