import { Controller, Logger } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { InjectModel } from '@nestjs/mongoose';
import { Model } from 'mongoose';
import { IdempotentHandler } from '../../lib';
import { OrderCancelledEvent, OrderCreatedEvent } from './order-events';
import { CustomerStats, OrderSummary } from './order-summary.schema';

/**
 * The consumer: keeps `order_summaries` and `customer_stats` up to date. Each handler runs in a
 * transaction with the `(consumer, eventId)` record, so a redelivered event changes nothing.
 */
@Controller()
export class OrderSummariesController {
  private readonly logger = new Logger(OrderSummariesController.name);

  constructor(
    @InjectModel(OrderSummary.name) private readonly summaries: Model<OrderSummary>,
    @InjectModel(CustomerStats.name) private readonly stats: Model<CustomerStats>,
  ) {}

  @EventPattern('OrderCreated')
  @IdempotentHandler({ consumer: 'order-summaries.created', dto: OrderCreatedEvent })
  async onOrderCreated(@Payload() event: OrderCreatedEvent, @Ctx() ctx: KafkaContext) {
    await this.summaries.updateOne(
      { orderId: event.orderId },
      {
        $setOnInsert: { status: 'placed' },
        $set: {
          customerId: event.customerId,
          total: event.total,
          itemCount: event.itemCount,
          updatedAt: new Date(),
        },
        $inc: { appliedEvents: 1 },
      },
      { upsert: true },
    );
    await this.stats.updateOne(
      { customerId: event.customerId },
      { $inc: { ordersPlaced: 1 } },
      { upsert: true },
    );
    this.logger.log(
      `applied OrderCreated ${event.orderId} (${ctx.getTopic()}@${ctx.getMessage().offset})`,
    );
  }

  @EventPattern('OrderCancelled')
  @IdempotentHandler({ consumer: 'order-summaries.cancelled', dto: OrderCancelledEvent })
  async onOrderCancelled(@Payload() event: OrderCancelledEvent, @Ctx() ctx: KafkaContext) {
    const summary = await this.summaries.findOneAndUpdate(
      { orderId: event.orderId },
      {
        $set: { status: 'cancelled', cancelReason: event.reason, updatedAt: new Date() },
        $inc: { appliedEvents: 1 },
      },
    );
    if (!summary) {
      // Events of one order arrive in order (same topic and key), so this means OrderCreated was
      // dead-lettered: fail, and let the retries and the dead-letter collection make it visible.
      throw new Error(`no summary for order ${event.orderId}: OrderCreated not applied`);
    }
    await this.stats.updateOne(
      { customerId: summary.customerId },
      { $inc: { ordersCancelled: 1 } },
    );
    this.logger.log(
      `applied OrderCancelled ${event.orderId} (${ctx.getTopic()}@${ctx.getMessage().offset})`,
    );
  }
}
