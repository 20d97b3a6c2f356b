import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { isValidObjectId, Model } from 'mongoose';
import { EmitsEvent, OutboxEmitter, Transactional } from '../../lib';
import { CreateOrderDto } from './order.dto';
import { Order, OrderDocument } from './order.schema';

export interface OrderView {
  id: string;
  customerId: string;
  items: Order['items'];
  total: number;
  status: Order['status'];
}

function view(order: OrderDocument): OrderView {
  return {
    id: order.id,
    customerId: order.customerId,
    items: order.items,
    total: order.total,
    status: order.status,
  };
}

/**
 * The write side: every change to an order and the event announcing it commit in one MongoDB
 * transaction (`@EmitsEvent` makes the method transactional; the model calls join the session).
 */
@Injectable()
export class OrdersService {
  constructor(
    @InjectModel(Order.name) private readonly orders: Model<Order>,
    private readonly outbox: OutboxEmitter,
  ) {}

  @EmitsEvent('OrderCreated', {
    aggregateType: 'Order',
    aggregateId: (order: OrderView) => order.id,
    payload: (order: OrderView) => ({
      orderId: order.id,
      customerId: order.customerId,
      total: order.total,
      itemCount: order.items.reduce((n, item) => n + item.quantity, 0),
    }),
  })
  async place(dto: CreateOrderDto): Promise<OrderView> {
    const total = dto.items.reduce((sum, item) => sum + item.quantity * item.unitPrice, 0);
    const [order] = await this.orders.create([
      { customerId: dto.customerId, items: dto.items, total: Math.round(total * 100) / 100 },
    ]);
    return view(order);
  }

  /** The event is decided in the body here, so it uses the emitter inside `@Transactional()`. */
  @Transactional()
  async cancel(id: string, reason?: string): Promise<OrderView> {
    const order = await this.find(id);
    if (order.status === 'cancelled') {
      throw new ConflictException(`order ${id} is already cancelled`);
    }
    order.status = 'cancelled';
    order.cancelReason = reason;
    await order.save();
    this.outbox.emit({
      eventType: 'OrderCancelled',
      aggregateType: 'Order',
      aggregateId: order.id,
      payload: { orderId: order.id, reason: reason ?? 'customer request' },
    });
    return view(order);
  }

  async get(id: string): Promise<OrderView> {
    return view(await this.find(id));
  }

  private async find(id: string): Promise<OrderDocument> {
    const order = isValidObjectId(id) ? await this.orders.findById(id) : null;
    if (!order) throw new NotFoundException(`order ${id} not found`);
    return order;
  }
}
