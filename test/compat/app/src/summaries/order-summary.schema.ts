import { Schema } from 'mongoose';

/** The read model the consumer builds: one document per order. */
export interface OrderSummary {
  orderId: string;
  customerId: string;
  total: number;
  /** How many times an event of this order was applied: 1 proves "applied once". */
  appliedEvents: number;
}

export const ORDER_SUMMARY_MODEL = 'OrderSummary';

export const OrderSummarySchema = new Schema<OrderSummary>({
  orderId: { type: String, required: true, unique: true },
  customerId: { type: String, required: true },
  total: { type: Number, required: true },
  appliedEvents: { type: Number, required: true },
});
