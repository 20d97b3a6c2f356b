import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { mongo } from 'mongoose';
import { describeError } from '../../common/errors/describe-error';
import { OutboxConnectionHost } from '../../common/outbox-connection.host';
import { OUTBOX_CONSUMER_OPTIONS, OUTBOX_STORAGE_OPTIONS } from '../../common/outbox.constants';
import type { OutboxStorageOptions } from '../../common/outbox-storage.options';
import type { ConsumerDeadLetterDocument } from '../../documents/consumer-dead-letter.document';
import type { ProcessedEventDocument } from '../../documents/processed-event.document';
import { TransactionRunner } from '../../transaction/transaction.runner';
import type { ConsumeOutcome } from '../consume.ports';
import { OutboxConsumerMetrics } from '../flow/consumer.metrics';
import {
  ensureConsumerDeadLetterIndexes,
  MongoConsumerFailureStore,
} from '../stores/consumer-failure.store';
import { ConsumerSink } from '../flow/consumer-sink';
import { isProducerLike, ProducerDeadLetterPublisher } from '../flow/dead-letter.publisher';
import {
  consumeIdempotently,
  consumeRejected,
  RedeliveryRequired,
  type ConsumeDeps,
  type ConsumeSettings,
} from '../flow/idempotent-consume.flow';
import type { IdempotentHandlerRuntimeApi } from './idempotent-handler.bindings';
import type { ResolvedConsumerOptions } from '../consumer.options';
import { mergeWithDefaults, type IdempotentHandlerSettings } from '../idempotent-handler.options';
import { redeliver, type KafkaDelivery } from './kafka-delivery';
import type { ConsumerRetryError } from '../consumer.errors';
import { applyBatch, type BatchResult } from '../batch/batch-apply.flow';
import { consumeInBatch } from '../batch/batch-consume.flow';
import type { ResolvedConsumerBatchOptions } from '../batch/consumer-batch.options';
import { BatchAbortedError, currentBatch } from '../batch/consume-batch.scope';
import { tenantConnection } from '../../tenants/tenant.connection';
import { TENANT_HEADER } from '../../tenants/tenant.header';
import { targetOf } from '../../tenants/tenant.resolution';
import { OUTBOX_TENANTS_OPTIONS, type TenantsSetting } from '../../tenants/tenants.resolved';
import type { Tenancy } from '../flow/idempotent-consume.flow';
import {
  ensureProcessedEventIndexes,
  hasProcessedUniqueIndex,
  MongoProcessedEventStore,
} from '../stores/processed-event.store';

/**
 * A runtime `@IdempotentHandler` methods can be bound to (by `IdempotentHandlerExplorer`):
 * `OutboxModule`'s (`IdempotentHandlerRuntime`, MongoDB) or `OutboxTestingModule`'s (in memory).
 * Both run the consume flow with the handler's settings over the module's, on the dependencies
 * each provides.
 */
export abstract class ConsumeRuntime implements IdempotentHandlerRuntimeApi {
  protected readonly logger = new Logger('IdempotentHandler');
  /** The module's `tenants` option (set by a subclass that supports tenants). */
  protected tenants: TenantsSetting = false;

  // Not decorated: Nest would add these parameters' tokens to each subclass's (at these indexes).
  constructor(
    protected readonly runner: TransactionRunner,
    readonly options: OutboxStorageOptions,
    protected readonly consumer: ResolvedConsumerOptions,
    protected readonly metrics: OutboxConsumerMetrics,
  ) {}

  /** The `connectionName` of its module (undefined: the default connection). */
  get connectionName(): string | undefined {
    return this.options.connectionName;
  }

  /** The collection of `(consumer, eventId)` records, for messages. */
  get processedEventsCollection(): string {
    return this.options.collections.processedEvents;
  }

  /** The `consumer.batch` limits of its module (how the transport forms batches). */
  get batchLimits(): ResolvedConsumerBatchOptions {
    return this.consumer.batch;
  }

  /** Makes the runtime ready; false when the unique `(consumer, eventId)` index is missing. */
  abstract prepare(): Promise<boolean>;

  /** One delivery: on its own, or (inside `applyBatch`) joining the batch's transaction. */
  async consume(
    delivery: KafkaDelivery,
    handler: IdempotentHandlerSettings,
    invoke: (payload: unknown) => unknown,
  ): Promise<ConsumeOutcome> {
    const batch = currentBatch();
    return this.guard(delivery, handler, (settings, deps) =>
      batch
        ? consumeInBatch(delivery, settings, invoke, deps, batch)
        : consumeIdempotently(delivery, settings, invoke, deps),
    );
  }

  /** A rejection before the method ran; inside a batch, it fails the batch (counted later). */
  async consumeRejected(
    delivery: KafkaDelivery,
    handler: IdempotentHandlerSettings,
    error: unknown,
  ): Promise<ConsumeOutcome> {
    const batch = currentBatch();
    if (batch) throw batch.fail(`${handler.handler} was rejected before it ran`, error);
    return this.guard(delivery, handler, (settings, deps) =>
      consumeRejected(delivery, settings, error, deps),
    );
  }

  /**
   * Applies consecutive events of one consumer in one transaction (`applyBatch`): `deliverAll`
   * runs their deliveries in order; the budget is the smallest `handlerTimeoutMs` of `handlers`;
   * `headers` (the raw messages') give the event ids looked up before it starts.
   */
  async applyBatch(
    handlers: readonly IdempotentHandlerSettings[],
    headers: readonly (Record<string, unknown> | undefined)[],
    deliverAll: () => Promise<void>,
  ): Promise<BatchResult> {
    const settings = handlers.map((handler) => mergeWithDefaults(handler, this.consumer));
    const budgetMs = Math.min(...settings.map((s) => s.handlerTimeoutMs));
    const eventIds = settings.map((s, i) => headerText(headers[i]?.[s.eventIdHeader]));
    const deps = await this.deps(undefined, settings[0], this.tenancy(headers[0]?.[TENANT_HEADER]));
    return applyBatch(settings[0].consumer, budgetMs, deps, eventIds, deliverAll);
  }

  protected abstract deps(
    delivery: KafkaDelivery | undefined,
    settings: ConsumeSettings,
    tenancy: Tenancy | undefined,
  ): ConsumeDeps | Promise<ConsumeDeps>;

  /**
   * With tenants: the tenant of a message from its `ce_tenant` header (a raw value, or the
   * consumed message's text), and its database; undefined without tenants.
   */
  protected tenancy(header: unknown): Tenancy | undefined {
    if (!this.tenants) return undefined;
    const tenant = headerText(header);
    if (tenant === undefined || tenant === '') {
      return {
        problem: `the message has no ${TENANT_HEADER} header; with the tenants option every event must name its tenant`,
      };
    }
    try {
      targetOf(this.tenants, tenant, 'consumer');
    } catch (error) {
      return { problem: (error as Error).message };
    }
    return { tenant };
  }

  /**
   * What a delivery the flow did not end is thrown as: the flow throws `RedeliveryRequired`, or
   * (a bug, a dependency failing unexpectedly) any error.
   */
  protected abstract unacknowledged(
    error: unknown,
    delivery: KafkaDelivery,
    settings: ConsumeSettings,
  ): unknown;

  /** Runs the flow with the handler's settings over the module's. */
  private async guard(
    delivery: KafkaDelivery,
    handler: IdempotentHandlerSettings,
    run: (settings: ConsumeSettings, deps: ConsumeDeps) => Promise<ConsumeOutcome>,
  ): Promise<ConsumeOutcome> {
    const settings = mergeWithDefaults(handler, this.consumer);
    try {
      const tenancy = this.tenancy(delivery.message.headers[TENANT_HEADER]);
      return await run(settings, await this.deps(delivery, settings, tenancy));
    } catch (error) {
      if (error instanceof BatchAbortedError) throw error; // the batch falls back, nothing ends here
      throw this.unacknowledged(error, delivery, settings);
    }
  }
}

/**
 * What `@IdempotentHandler` methods of one `OutboxModule` run on: the app's connection, its
 * `TransactionRunner`, the processed-events and consumer-dead-letters collections, the metrics.
 * The explorer prepares it at bootstrap (indexes) when the app has handlers for this module.
 */
@Injectable()
export class IdempotentHandlerRuntime extends ConsumeRuntime {
  private parts?: Stores;

  constructor(
    private readonly connectionHost: OutboxConnectionHost,
    runner: TransactionRunner,
    @Inject(OUTBOX_STORAGE_OPTIONS) options: OutboxStorageOptions,
    @Inject(OUTBOX_CONSUMER_OPTIONS) consumer: ResolvedConsumerOptions,
    metrics: OutboxConsumerMetrics,
    @Optional() @Inject(OUTBOX_TENANTS_OPTIONS) tenants: TenantsSetting = false,
  ) {
    super(runner, options, consumer, metrics);
    this.tenants = tenants;
  }

  /**
   * Creates the consumer indexes (`createIndexes: true`), or checks that the unique
   * `(consumer, eventId)` index exists (`createIndexes: false`): returns false when it is missing.
   */
  async prepare(): Promise<boolean> {
    const { processed, deadLetters, db } = this.collections();
    if (this.options.createIndexes) {
      await ensureProcessedEventIndexes(processed, db, this.consumer.processedRetentionSeconds);
      await ensureConsumerDeadLetterIndexes(deadLetters);
      return true;
    }
    return hasProcessedUniqueIndex(processed);
  }

  /** `RedeliveryRequired` (and any unexpected error) as a pause and a `ConsumerRetryError`. */
  protected unacknowledged(
    error: unknown,
    delivery: KafkaDelivery,
    settings: ConsumeSettings,
  ): ConsumerRetryError {
    const context = { consumer: settings.consumer, handler: settings.handler };
    if (error instanceof RedeliveryRequired) {
      if (error.pauseMs !== undefined) this.metrics.partitionPauses++;
      return redeliver(delivery, error.message, error.pauseMs, error.cause, context);
    }
    // A bug, or a dependency failing in a way the flow does not expect: never acknowledge.
    this.logger.error(
      `${settings.handler}: unexpected error, the message will be delivered again: ${describeError(error)}`,
    );
    this.metrics.partitionPauses++;
    const pauseMs = this.stores().sink.retryDelayMs();
    return redeliver(delivery, `${settings.handler}: unexpected error`, pauseMs, error, context);
  }

  protected async deps(
    delivery: KafkaDelivery | undefined,
    settings: ConsumeSettings,
    tenancy: Tenancy | undefined,
  ): Promise<ConsumeDeps> {
    const { processed, sink } =
      tenancy?.tenant !== undefined ? await this.tenantStores(tenancy.tenant) : this.stores();
    return {
      ...(tenancy ? { tenancy } : {}),
      runner: this.runner,
      processed,
      sink,
      metrics: this.metrics,
      logger: this.logger,
      ...(settings.deadLetterTopic && isProducerLike(delivery?.producer)
        ? {
            publisher: new ProducerDeadLetterPublisher(
              delivery!.producer,
              this.consumer.deadLetterMaxValueBytes,
            ),
          }
        : {}),
    };
  }

  /**
   * The stores of a tenant's database (its processed records and consumer dead letters), made
   * once per database; its indexes are created (`createIndexes`) before its first use.
   */
  private async tenantStores(tenant: string): Promise<Stores> {
    const { database } = targetOf(
      this.tenants as Exclude<TenantsSetting, false>,
      tenant,
      'consumer',
    );
    let ready = this.byDatabase.get(database);
    if (!ready) {
      ready = this.prepareDatabase(database).then(() => this.makeStores(database));
      this.byDatabase.set(database, ready);
      ready.catch(() => this.byDatabase.delete(database));
    }
    return ready;
  }

  private readonly byDatabase = new Map<string, Promise<Stores>>();

  /** Creates the consumer indexes in `database` (`createIndexes`); for `ensureTenantIndexes`. */
  async prepareDatabase(database: string): Promise<void> {
    if (!this.options.createIndexes) return;
    const { processed, deadLetters, db } = this.collections(database);
    await ensureProcessedEventIndexes(processed, db, this.consumer.processedRetentionSeconds);
    await ensureConsumerDeadLetterIndexes(deadLetters);
  }

  private collections(database?: string) {
    const connection = tenantConnection(this.connectionHost.connection, database);
    const { collections } = this.options;
    return {
      db: connection.db as mongo.Db,
      processed: connection.collection(
        collections.processedEvents,
      ) as unknown as mongo.Collection<ProcessedEventDocument>,
      deadLetters: connection.collection(
        collections.consumerDeadLetters,
      ) as unknown as mongo.Collection<ConsumerDeadLetterDocument>,
    };
  }

  private stores(): Stores {
    return (this.parts ??= this.makeStores(undefined));
  }

  private makeStores(database: string | undefined): Stores {
    const { processed, deadLetters } = this.collections(database);
    const { consumer } = this;
    return {
      processed: new MongoProcessedEventStore(processed, () => this.runner.currentSession()),
      sink: new ConsumerSink(
        new MongoConsumerFailureStore(deadLetters, {
          errorHistoryLimit: consumer.errorHistoryLimit,
          failingRetentionSeconds: consumer.processedRetentionSeconds,
          maxValueBytes: consumer.deadLetterMaxValueBytes,
        }),
        this.logger,
      ),
    };
  }
}

interface Stores {
  processed: MongoProcessedEventStore;
  sink: ConsumerSink;
}

/** A raw header value as text (a Buffer, a string), or undefined. */
function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}
