import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CancelOrderDto, CreateOrderDto } from './order.dto';
import { OrdersService, OrderView } from './orders.service';

@Controller('orders')
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Post()
  place(@Body() dto: CreateOrderDto): Promise<OrderView> {
    return this.orders.place(dto);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@Param('id') id: string, @Body() dto: CancelOrderDto): Promise<OrderView> {
    return this.orders.cancel(id, dto.reason);
  }

  @Get(':id')
  get(@Param('id') id: string): Promise<OrderView> {
    return this.orders.get(id);
  }
}
