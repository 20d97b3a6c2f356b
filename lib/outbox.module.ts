import { Module } from '@nestjs/common';
import { OutboxConnectionHost } from './common/outbox-connection.host';
import { OUTBOX_RESOLVED_OPTIONS } from './common/outbox.constants';
import { CONSUMER_EXPORTS, CONSUMER_PROVIDERS } from './consumer/consumer.providers';
import { MongooseOutboxEventWriter, OUTBOX_EVENT_WRITER } from './events/outbox-event.writer';
import { OutboxEmitter } from './events/outbox.emitter';
import { OutboxHealthIndicator } from './health/outbox-health.indicator';
import { OutboxConsumerDeadLetters } from './operations/outbox-consumer-dead-letters.service';
import { OutboxDeadLetters } from './operations/outbox-dead-letters.service';
import { ConfigurableOutboxModule, OUTBOX_MODULE_OPTIONS } from './outbox.module-definition';
import type { OutboxModuleOptions } from './options/outbox-options.interface';
import { resolveOutboxOptions } from './options/outbox-options.validator';
import { RELAY_EXPORTS, RELAY_PROVIDERS } from './relay/relay.providers';
import { OutboxWriteSideBootstrap } from './transaction/outbox-write-side.bootstrap';
import { OutboxTelemetry } from './telemetry/outbox-telemetry.service';
import { TransactionRunner } from './transaction/transaction.runner';

/**
 * The transactional outbox. Reuses the app's Mongoose connection (import `MongooseModule.forRoot`
 * yourself). `OutboxModule.forRoot({...})` or `forRootAsync({ useFactory, inject, imports })`;
 * add `isGlobal: true` to inject `OutboxEmitter` everywhere. Bad options fail bootstrap.
 */
@Module({
  providers: [
    {
      provide: OUTBOX_RESOLVED_OPTIONS,
      useFactory: (raw: OutboxModuleOptions) => resolveOutboxOptions(raw),
      inject: [OUTBOX_MODULE_OPTIONS],
    },
    OutboxConnectionHost,
    { provide: OUTBOX_EVENT_WRITER, useClass: MongooseOutboxEventWriter },
    TransactionRunner,
    OutboxEmitter,
    OutboxWriteSideBootstrap,
    OutboxDeadLetters,
    OutboxConsumerDeadLetters,
    ...RELAY_PROVIDERS,
    ...CONSUMER_PROVIDERS,
    OutboxTelemetry,
    OutboxHealthIndicator,
  ],
  exports: [
    OutboxEmitter,
    TransactionRunner,
    OutboxConnectionHost,
    OutboxDeadLetters,
    OutboxConsumerDeadLetters,
    OutboxHealthIndicator,
    OUTBOX_RESOLVED_OPTIONS,
    ...RELAY_EXPORTS,
    ...CONSUMER_EXPORTS,
  ],
})
export class OutboxModule extends ConfigurableOutboxModule {}
