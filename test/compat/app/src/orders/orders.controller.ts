import { Body, Controller, Post } from '@nestjs/common';
import type { Order } from './order.schema.js';
import { OrdersService } from './orders.service.js';

@Controller('orders')
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Post()
  place(@Body() body: { customerId: string; total: number }): Promise<Order> {
    return this.orders.place(body.customerId, body.total);
  }
}
