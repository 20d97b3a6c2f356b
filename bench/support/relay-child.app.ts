/* The app of a bench's relay child process (bench/*.child.ts), from what its parent passes in
 * the environment (bench/support/relay-child.ts): MONGODB_URI (with the bench database),
 * KAFKA_BROKERS, BENCH_PREFIX, BENCH_BATCH and RELAY_BENCH_OPTIONS (JSON merged into the relay
 * options). */
import type { INestApplicationContext, LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MongooseModule } from '@nestjs/mongoose';
import type { MongooseModuleOptions } from '@nestjs/mongoose';
import { OutboxModule } from '../../lib';
import type { OutboxTenantsOptions, RelayOptions } from '../../lib';

/**
 * The outbox app with its relay not started (the child starts it when its measurement begins):
 * the relay options are `defaults`, then RELAY_BENCH_OPTIONS over them; `tenants`, when given,
 * makes it one relay over those tenant databases.
 */
export function createRelayChildApp(
  logger: LoggerService | LogLevel[],
  defaults: Partial<RelayOptions> = {},
  mongoose: MongooseModuleOptions = {},
  tenants?: OutboxTenantsOptions,
): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(
    {
      module: class RelayBenchChildModule {},
      imports: [
        MongooseModule.forRoot(process.env.MONGODB_URI as string, mongoose),
        OutboxModule.forRoot({
          relay: {
            autoStart: false,
            kafka: { brokers: (process.env.KAFKA_BROKERS as string).split(',') },
            topicPrefix: process.env.BENCH_PREFIX,
            batchSize: Number(process.env.BENCH_BATCH),
            ...defaults,
            ...JSON.parse(process.env.RELAY_BENCH_OPTIONS ?? '{}'),
          },
          ...(tenants && { tenants }),
        }),
      ],
    } as never,
    { logger },
  );
}

/** The log levels RELAY_BENCH_LOG asks for: `warn` or `log` add those; default errors only. */
export function logLevels(level: string | undefined): LogLevel[] {
  if (level === 'log') return ['error', 'warn', 'log'];
  if (level === 'warn') return ['error', 'warn'];
  return ['error'];
}
