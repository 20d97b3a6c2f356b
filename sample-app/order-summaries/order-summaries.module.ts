import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { OrderSummariesController } from './order-summaries.controller';
import {
  CustomerStats,
  CustomerStatsSchema,
  OrderSummary,
  OrderSummarySchema,
} from './order-summary.schema';

@Module({
  imports: [
    MongooseModule.forFeature([
      { name: OrderSummary.name, schema: OrderSummarySchema },
      { name: CustomerStats.name, schema: CustomerStatsSchema },
    ]),
  ],
  controllers: [OrderSummariesController],
})
export class OrderSummariesModule {}
