import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { HydratedDocument } from 'mongoose';

export type OrderStatus = 'placed' | 'cancelled';

@Schema({ collection: 'orders', timestamps: true })
export class Order {
  @Prop({ required: true })
  customerId!: string;

  @Prop({
    type: [{ sku: String, quantity: Number, unitPrice: Number, _id: false }],
    required: true,
  })
  items!: Array<{ sku: string; quantity: number; unitPrice: number }>;

  @Prop({ required: true })
  total!: number;

  @Prop({ required: true, default: 'placed' })
  status!: OrderStatus;

  @Prop()
  cancelReason?: string;
}

export type OrderDocument = HydratedDocument<Order>;
export const OrderSchema = SchemaFactory.createForClass(Order);
