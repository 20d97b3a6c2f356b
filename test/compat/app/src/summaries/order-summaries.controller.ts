import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { IdempotentHandler } from 'nestjs-outbox';
import { ORDER_SUMMARY_MODEL, type OrderSummary } from './order-summary.schema.js';

export interface OrderPlaced {
  orderId: string;
  customerId: string;
  total: number;
}

@Controller()
export class OrderSummariesController {
  constructor(@InjectModel(ORDER_SUMMARY_MODEL) private readonly summaries: Model<OrderSummary>) {}

  // The README's consumer signature, as users copy it.
  @EventPattern<string>('OrderPlaced')
  @IdempotentHandler({ consumer: 'order-summaries' })
  async onPlaced(@Payload() event: OrderPlaced, @Ctx() ctx: KafkaContext): Promise<void> {
    // Runs in one transaction with the (consumer, eventId) record.
    await this.summaries.updateOne(
      { orderId: event.orderId },
      {
        $setOnInsert: { customerId: event.customerId, total: event.total },
        $inc: { appliedEvents: 1 },
      },
      { upsert: true },
    );
    void ctx.getTopic();
  }
}
