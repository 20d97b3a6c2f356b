import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ScheduleModule } from '@nestjs/schedule';
import { OutboxModule } from 'nestjs-outbox';
import { appConfig } from './app.config.js';
import { OrdersModule } from './orders/orders.module.js';
import { SummariesModule } from './summaries/summaries.module.js';

@Module({
  imports: [
    // Optional: with it, the relay's periodic jobs are named intervals of the SchedulerRegistry.
    ScheduleModule.forRoot(),
    MongooseModule.forRootAsync({
      useFactory: () => ({ uri: appConfig().mongoUri, dbName: appConfig().dbName }),
    }),
    OutboxModule.forRootAsync({
      isGlobal: true,
      useFactory: () => ({
        relay: {
          kafka: { brokers: appConfig().kafkaBrokers, clientId: 'shop-relay' },
          topicPrefix: appConfig().topicPrefix,
          // Events the change stream missed are swept up after one second.
          sweepIntervalMs: 500,
          sweepGraceMs: 1000,
        },
      }),
    }),
    OrdersModule,
    SummariesModule,
  ],
})
export class AppModule {}
