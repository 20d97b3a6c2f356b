import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { OutboxConnectionHost } from './common/outbox-connection.host';
import { CONSUMER_PROVIDERS } from './consumer/nest/consumer.providers';
import { MongooseOutboxEventWriter, OUTBOX_EVENT_WRITER } from './events/outbox-event.writer';
import { OutboxEmitter } from './events/outbox.emitter';
import { OutboxHealthIndicator } from './health/outbox-health.indicator';
import { OneModulePerConnectionCheck } from './injection/one-module-per-connection.check';
import { OutboxConsumerDeadLetters } from './operations/outbox-consumer-dead-letters.service';
import { OutboxDeadLetters } from './operations/outbox-dead-letters.service';
import { OutboxReadCollections } from './operations/read/outbox-read.collections';
import { ConfigurableOutboxModule } from './outbox.module-definition';
import { RELAY_PROVIDERS } from './relay/relay.providers';
import { OutboxTelemetry } from './telemetry/metrics/outbox-telemetry.service';
import { OutboxWriteSideBootstrap } from './events/outbox-write-side.bootstrap';
import { TransactionRunner } from './transaction/transaction.runner';
import { OutboxTenants } from './outbox-tenants.service';

/**
 * The transactional outbox. Reuses the app's Mongoose connection (import `MongooseModule.forRoot`
 * yourself). `OutboxModule.forRoot({...})` or `forRootAsync({ useFactory, inject, imports })`;
 * add `isGlobal: true` to inject `OutboxEmitter` everywhere, `connectionName` for a named
 * connection. Bad options fail bootstrap. The validated options and the exports, which depend on
 * the connection name, are added by `outbox.module-definition.ts`.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    OutboxConnectionHost,
    OneModulePerConnectionCheck,
    { provide: OUTBOX_EVENT_WRITER, useClass: MongooseOutboxEventWriter },
    TransactionRunner,
    OutboxEmitter,
    OutboxWriteSideBootstrap,
    OutboxDeadLetters,
    OutboxConsumerDeadLetters,
    OutboxReadCollections,
    ...RELAY_PROVIDERS,
    ...CONSUMER_PROVIDERS,
    OutboxTelemetry,
    OutboxHealthIndicator,
    OutboxTenants,
  ],
})
export class OutboxModule extends ConfigurableOutboxModule {}
