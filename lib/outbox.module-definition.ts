import { ConfigurableModuleBuilder } from '@nestjs/common';
import mongoose from 'mongoose';
import type { DynamicModule, InjectionToken, Provider, Type } from '@nestjs/common';
import { CONSUMER_EXPORTS } from './consumer/nest/consumer.providers';
import { OutboxEmitter } from './events/outbox.emitter';
import { getOutboxToken } from './injection/outbox-token.utils';
import { OutboxHealthIndicator } from './health/outbox-health.indicator';
import { OutboxConsumerDeadLetters } from './operations/outbox-consumer-dead-letters.service';
import { OutboxDeadLetters } from './operations/outbox-dead-letters.service';
import type { OutboxModuleOptions } from './options/outbox-options.interface';
import { resolveOutboxOptions } from './options/outbox-options.validator';
import { resolvedOptionProviders } from './options/resolved-options';
import { RELAY_EXPORTS } from './relay/relay.providers';
import { registerConnectionSessions } from './transaction/connection-session.plugin';
import { TransactionRunner } from './transaction/transaction.runner';
import { OutboxTenants } from './outbox-tenants.service';

/** Options of `forRoot`/`forRootAsync` that shape the module, not the outbox. */
export interface OutboxModuleExtras {
  /** Register the module globally (its exports, e.g. `OutboxEmitter`, injectable everywhere). */
  isGlobal?: boolean;
  /**
   * The `@nestjs/mongoose` connection to reuse (the `connectionName` given to
   * `MongooseModule.forRoot`); default: the default connection. With `forRootAsync`, give it next
   * to `useFactory` (as with `MongooseModule.forRootAsync`): the module's injection tokens depend
   * on it. A named module's services are injected with `@InjectOutboxEmitter(name)` and
   * `@InjectTransactionRunner(name)` (see `getOutboxToken`).
   */
  connectionName?: string;
}

/** The services an OutboxModule exports, under `getOutboxToken(service, connectionName)`. */
function exportedServices(): Provider[] {
  return [
    OutboxEmitter,
    TransactionRunner,
    OutboxDeadLetters,
    OutboxConsumerDeadLetters,
    OutboxHealthIndicator,
    OutboxTenants,
    ...RELAY_EXPORTS,
    ...CONSUMER_EXPORTS,
  ];
}

/**
 * Adds what depends on the connection name: the resolved options (validated at bootstrap) and the
 * exports, under the class for the default connection and under named tokens for a named one.
 */
function withConnection(definition: DynamicModule, extras: OutboxModuleExtras): DynamicModule {
  const { connectionName } = extras;
  // Called by forRoot()/forRootAsync(), before the app's models are compiled: every model then
  // uses the session of its own connection (see connectionSessionPlugin).
  registerConnectionSessions(mongoose);
  const aliases: Provider[] = [];
  const exported: InjectionToken[] = [];
  for (const service of exportedServices()) {
    const token = typeof service === 'function' ? service : service.provide;
    if (connectionName === undefined || typeof token !== 'function') {
      exported.push(token);
      continue;
    }
    const named = getOutboxToken(token as Type<unknown>, connectionName);
    aliases.push({ provide: named, useExisting: token });
    exported.push(named);
  }
  return {
    ...definition,
    global: extras.isGlobal,
    providers: [
      ...(definition.providers ?? []),
      ...resolvedOptionProviders({
        useFactory: (raw: OutboxModuleOptions) => resolveOutboxOptions(raw, connectionName),
        inject: [OUTBOX_MODULE_OPTIONS],
      }),
      ...aliases,
    ],
    exports: [...(definition.exports ?? []), ...exported],
  };
}

export const {
  ConfigurableModuleClass: ConfigurableOutboxModule,
  MODULE_OPTIONS_TOKEN: OUTBOX_MODULE_OPTIONS,
  OPTIONS_TYPE: OUTBOX_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<OutboxModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras<OutboxModuleExtras>({ isGlobal: false, connectionName: undefined }, withConnection)
  .build();
