import { Schema } from 'mongoose';

export interface Order {
  _id: string;
  customerId: string;
  total: number;
}

export const ORDER_MODEL = 'Order';

export const OrderSchema = new Schema<Order>({
  _id: { type: String, required: true },
  customerId: { type: String, required: true },
  total: { type: Number, required: true },
});
