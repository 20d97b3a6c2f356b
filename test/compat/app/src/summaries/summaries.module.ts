import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ORDER_SUMMARY_MODEL, OrderSummarySchema } from './order-summary.schema.js';
import { OrderSummariesController } from './order-summaries.controller.js';

@Module({
  imports: [MongooseModule.forFeature([{ name: ORDER_SUMMARY_MODEL, schema: OrderSummarySchema }])],
  controllers: [OrderSummariesController],
})
export class SummariesModule {}
