import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { EmitsEvent, Transactional } from 'nestjs-outbox';
import { ORDER_MODEL, type Order } from './order.schema.js';

@Injectable()
export class OrdersService {
  constructor(@InjectModel(ORDER_MODEL) private readonly orders: Model<Order>) {}

  /** Saves the order and its `OrderPlaced` event in one transaction. */
  @Transactional()
  @EmitsEvent('OrderPlaced', {
    aggregateType: 'Order',
    aggregateId: (order: Order) => order._id,
    payload: (order: Order) => ({
      orderId: order._id,
      customerId: order.customerId,
      total: order.total,
    }),
  })
  async place(customerId: string, total: number): Promise<Order> {
    const [order] = await this.orders.create([{ _id: randomUUID(), customerId, total }]);
    return order.toObject();
  }
}
