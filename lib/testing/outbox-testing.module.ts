import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { DynamicModule, InjectionToken, Provider, Type } from '@nestjs/common';
import { OutboxConnectionHost } from '../common/outbox-connection.host';
import { OutboxConsumerMetrics } from '../consumer/flow/consumer.metrics';
import { IdempotentHandlerExplorer } from '../consumer/nest/idempotent-handler.explorer';
import { IdempotentHandlerMetadataAccessor } from '../consumer/nest/idempotent-handler.metadata-accessor';
import { IdempotentHandlerRuntime } from '../consumer/nest/idempotent-handler.runtime';
import { OUTBOX_EVENT_WRITER } from '../events/outbox-event.writer';
import { OutboxEmitter } from '../events/outbox.emitter';
import { getOutboxToken } from '../injection/outbox-token.utils';
import type { OutboxModuleOptions } from '../options/outbox-options.interface';
import type { OutboxTenantsOptions } from '../tenants/tenants.options';
import { resolveOutboxOptions } from '../options/outbox-options.validator';
import { resolvedOptionProviders } from '../options/resolved-options';
import { RELAY_EXPORTS, RELAY_PROVIDERS } from '../relay/relay.providers';
import { OutboxWriteSideBootstrap } from '../events/outbox-write-side.bootstrap';
import { TransactionRunner } from '../transaction/transaction.runner';
import { FakeConnection } from './fakes/fake-connection';
import { InMemoryConsumerRuntime } from './consumer/in-memory-consumer.runtime';
import { OUTBOX_TESTING_TOPIC_PREFIX, OutboxTesting } from './outbox-testing.service';
import { RecordingOutboxWriter } from './recording-outbox.writer';

/** Options of `OutboxTestingModule.forRoot()`: the outbox options that matter without servers. */
export interface OutboxTestingOptions extends Pick<
  OutboxModuleOptions,
  'maxPayloadBytes' | 'allowBigInt' | 'scheduledEvents' | 'consumer'
> {
  /**
   * The connection name your code's `OutboxModule` uses: `@Transactional({ connectionName })`,
   * `@InjectOutboxEmitter(name)` and the like then find this module. Default: the default one.
   */
  connectionName?: string;
  /**
   * As `OutboxModule`'s `tenants` (only `resolve` and `databaseOf` matter here; `databases` may be
   * left out): each recorded event has its `tenant` and `database`, emits outside a tenant throw
   * `OutboxTenantNotResolvedError`; wrap calls in `runInTenant(tenant, fn)`.
   */
  tenants?: Omit<OutboxTenantsOptions, 'databases'> &
    Partial<Pick<OutboxTenantsOptions, 'databases'>>;
  /** Register globally (like `OutboxModule`'s `isGlobal`). Default true. */
  isGlobal?: boolean;
  /**
   * The relay's `topicPrefix`: `drain()` delivers an event to `@EventPattern(topic)` handlers of
   * `${topicPrefix}${aggregateType}` (plain Kafka transport) and to `@EventPattern(eventType)`
   * ones (`OutboxKafkaServer`). Default ''.
   */
  topicPrefix?: string;
}

/**
 * `OutboxModule` for unit tests, without MongoDB or Kafka: import it instead of `OutboxModule` and
 * `MongooseModule` (provide your models' test doubles). `@Transactional()`, `@EmitsEvent()` and
 * `OutboxEmitter` work as in production on in-memory transactions (a method that throws rolls
 * back, its events unrecorded). Inject `OutboxTesting` to assert what was emitted and `drain()`
 * it to the `@IdempotentHandler` methods in process. `init()` refuses the handlers `OutboxModule`
 * refuses.
 *
 * ```ts
 * const moduleRef = await Test.createTestingModule({
 *   imports: [OutboxTestingModule.forRoot()],
 *   providers: [OrdersService, { provide: getModelToken('Order'), useValue: orderModelDouble }],
 * }).compile();
 * await moduleRef.init();
 * ```
 */
@Module({})
export class OutboxTestingModule {
  static forRoot(options: OutboxTestingOptions = {}): DynamicModule {
    const { isGlobal = true, topicPrefix = '', connectionName, tenants, ...rest } = options;
    const outbox: OutboxModuleOptions = {
      ...rest,
      ...(tenants ? { tenants: { databases: [], ...tenants } } : {}),
    };
    const connection = new FakeConnection();
    const writer = new RecordingOutboxWriter();
    const providers: Provider[] = [
      ...resolvedOptionProviders({
        useFactory: () =>
          resolveOutboxOptions({ ...outbox, relay: false, createIndexes: false }, connectionName),
      }),
      { provide: OutboxConnectionHost, useValue: { connection: connection.asConnection } },
      { provide: RecordingOutboxWriter, useValue: writer },
      { provide: OUTBOX_EVENT_WRITER, useExisting: RecordingOutboxWriter },
      TransactionRunner,
      OutboxEmitter,
      OutboxWriteSideBootstrap,
      OutboxTesting,
      { provide: OUTBOX_TESTING_TOPIC_PREFIX, useValue: topicPrefix },
      IdempotentHandlerMetadataAccessor,
      IdempotentHandlerExplorer,
      InMemoryConsumerRuntime,
      // The explorer binds the handlers to the in-memory runtime, through the production checks.
      { provide: IdempotentHandlerRuntime, useExisting: InMemoryConsumerRuntime },
      OutboxConsumerMetrics,
      ...RELAY_PROVIDERS,
    ];
    // A named connection's services are also injected by name (`@InjectOutboxEmitter(name)`).
    const named: Provider[] =
      connectionName === undefined
        ? []
        : [OutboxEmitter, TransactionRunner].map((service) => ({
            provide: getOutboxToken(service as Type<unknown>, connectionName),
            useExisting: service,
          }));
    providers.push(...named);
    return {
      module: OutboxTestingModule,
      global: isGlobal,
      imports: [DiscoveryModule],
      providers,
      exports: [
        OutboxEmitter,
        TransactionRunner,
        OutboxTesting,
        OutboxConsumerMetrics,
        ...RELAY_EXPORTS,
        ...named.map((provider) => (provider as { provide: InjectionToken }).provide),
      ],
    };
  }
}
