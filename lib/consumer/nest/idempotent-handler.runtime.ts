import { Inject, Injectable, Logger } from '@nestjs/common';
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
    const deps = this.deps(undefined, settings[0]);
    return applyBatch(settings[0].consumer, budgetMs, deps, eventIds, deliverAll);
  }

  protected abstract deps(
    delivery: KafkaDelivery | undefined,
    settings: ConsumeSettings,
  ): ConsumeDeps;

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
      return await run(settings, this.deps(delivery, settings));
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
  private parts?: { processed: MongoProcessedEventStore; sink: ConsumerSink };

  constructor(
    private readonly connectionHost: OutboxConnectionHost,
    runner: TransactionRunner,
    @Inject(OUTBOX_STORAGE_OPTIONS) options: OutboxStorageOptions,
    @Inject(OUTBOX_CONSUMER_OPTIONS) consumer: ResolvedConsumerOptions,
    metrics: OutboxConsumerMetrics,
  ) {
    super(runner, options, consumer, metrics);
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

  protected deps(delivery: KafkaDelivery | undefined, settings: ConsumeSettings): ConsumeDeps {
    const { processed, sink } = this.stores();
    return {
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

  private collections() {
    const connection = this.connectionHost.connection;
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

  private stores(): { processed: MongoProcessedEventStore; sink: ConsumerSink } {
    if (!this.parts) {
      const { processed, deadLetters } = this.collections();
      const { consumer } = this;
      this.parts = {
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
    return this.parts;
  }
}

/** A raw header value as text (a Buffer, a string), or undefined. */
function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}
