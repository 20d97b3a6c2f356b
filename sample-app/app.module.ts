import { DynamicModule, Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { OutboxModule, type OutboxModuleOptions } from '../lib';
import { OutboxConsoleModule } from '../lib/console';
import type { SampleConfig } from './config';
import { SampleConsoleAuthGuard } from './console/console-auth.guard';
import { ObservabilityModule } from './observability/observability.module';
import { OrderSummariesModule } from './order-summaries/order-summaries.module';
import { OrdersModule } from './orders/orders.module';

/** Configuration reaches the modules through this token (filled from environment variables). */
export const SAMPLE_CONFIG = 'SAMPLE_CONFIG';

@Module({})
class SampleConfigModule {}

/**
 * The sample app. Which parts run (HTTP API, relay, consumer) is decided by `config.parts`; the
 * outbox itself is configured with `forRootAsync`, from the same configuration.
 */
@Module({})
export class AppModule {
  static register(config: SampleConfig): DynamicModule {
    const configModule: DynamicModule = {
      module: SampleConfigModule,
      providers: [{ provide: SAMPLE_CONFIG, useValue: config }],
      exports: [SAMPLE_CONFIG],
    };
    return {
      module: AppModule,
      imports: [
        MongooseModule.forRoot(config.mongoUri),
        OutboxModule.forRootAsync({
          isGlobal: true,
          imports: [configModule],
          inject: [SAMPLE_CONFIG],
          useFactory: (cfg: SampleConfig): OutboxModuleOptions => ({
            // Number each order's events (1 = created, 2 = cancelled) in commit order, on every
            // path of the relay; consumers see it in the ce_sequence header.
            aggregateSequence: true,
            // Orders can be reminded later (the console's Scheduled page lists them).
            scheduledEvents: true,
            relay: cfg.parts.has('relay')
              ? {
                  kafka: { brokers: cfg.kafkaBrokers, clientId: 'orders-relay' },
                  // Topic per aggregate type (`Order`): every event of an order on one partition, in order.
                  topicPrefix: cfg.topicPrefix,
                  sweepGraceMs: 5_000,
                }
              : false,
            consumer: { maxFailures: 3 },
          }),
        }),
        ...(config.parts.has('api')
          ? [
              OrdersModule,
              ObservabilityModule,
              // The outbox console at /outbox, behind the sample's Basic-auth guard.
              OutboxConsoleModule.forRoot({
                path: 'outbox',
                guards: [SampleConsoleAuthGuard],
                actions: true,
                redact: ['card'],
                consumers: ['order-summaries.created', 'order-summaries.cancelled'],
              }),
            ]
          : []),
        ...(config.parts.has('consumer') ? [OrderSummariesModule] : []),
      ],
    };
  }
}
