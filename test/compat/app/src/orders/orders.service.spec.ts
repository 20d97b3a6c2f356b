import { Test } from '@nestjs/testing';
import { getModelToken } from '@nestjs/mongoose';
import { OutboxNotInitializedError } from 'nestjs-outbox';
import { ORDER_MODEL } from './order.schema.js';
import { OrdersService } from './orders.service.js';

// A unit test needs no server: without OutboxModule, the decorated method says so plainly.
describe('OrdersService', () => {
  it('refuses to run outside an initialized OutboxModule', async () => {
    const moduleRef = await Test.createTestingModule({
      providers: [OrdersService, { provide: getModelToken(ORDER_MODEL), useValue: {} }],
    }).compile();
    const service = moduleRef.get(OrdersService);
    await expect(service.place('ada', 25)).rejects.toBeInstanceOf(OutboxNotInitializedError);
  });
});
