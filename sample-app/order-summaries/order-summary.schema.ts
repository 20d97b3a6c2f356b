import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/** The read model the consumer maintains: one summary per order. */
@Schema({ collection: 'order_summaries' })
export class OrderSummary {
  @Prop({ required: true, unique: true })
  orderId!: string;

  @Prop({ required: true })
  customerId!: string;

  @Prop({ required: true })
  total!: number;

  @Prop({ required: true })
  itemCount!: number;

  @Prop({ required: true })
  status!: 'placed' | 'cancelled';

  @Prop()
  cancelReason?: string;

  /** Events applied to this summary; stays exact only because each event is applied once. */
  @Prop({ required: true, default: 0 })
  appliedEvents!: number;

  @Prop({ required: true })
  updatedAt!: Date;
}

export const OrderSummarySchema = SchemaFactory.createForClass(OrderSummary);

/** Per customer: a counter that would drift if an event were applied twice. */
@Schema({ collection: 'customer_stats' })
export class CustomerStats {
  @Prop({ required: true, unique: true })
  customerId!: string;

  @Prop({ required: true, default: 0 })
  ordersPlaced!: number;

  @Prop({ required: true, default: 0 })
  ordersCancelled!: number;
}

export const CustomerStatsSchema = SchemaFactory.createForClass(CustomerStats);
