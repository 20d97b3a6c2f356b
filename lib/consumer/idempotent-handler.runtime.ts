import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import type { Model } from 'mongoose';
import { OutboxConnectionHost } from '../common/outbox-connection.host';
import { OUTBOX_RESOLVED_OPTIONS } from '../common/outbox.constants';
import type { ResolvedOutboxOptions } from '../options/resolved-options';
import { TransactionRunner } from '../transaction/transaction.runner';
import type { ConsumedMessage } from './consumed-message';
import {
  consumerDeadLetterModel,
  ensureConsumerDeadLetterIndexes,
  MongooseConsumerFailureStore,
  type ConsumerDeadLetterDocument,
} from './consumer-failure.store';
import { isProducerLike, ProducerDeadLetterPublisher } from './dead-letter.publisher';
import { consumeIdempotently, type ConsumeOutcome } from './idempotent-consume.flow';
import type { IdempotentHandlerRuntimeApi } from './idempotent-handler.host';
import { IdempotentHandlerHost } from './idempotent-handler.host';
import { mergeWithDefaults, type IdempotentHandlerSettings } from './idempotent-handler.options';
import {
  ensureProcessedEventIndexes,
  MongooseProcessedEventStore,
  processedEventModel,
  type ProcessedEventDocument,
} from './processed-event.store';

/**
 * What `@IdempotentHandler` methods call at run time: the app's connection, its
 * `TransactionRunner`, the processed-events and consumer-dead-letters collections. Creates their
 * indexes at bootstrap when the process has `@IdempotentHandler` methods (unless
 * `createIndexes: false`): without the unique index on `(consumer, eventId)` nothing is deduped.
 */
@Injectable()
export class IdempotentHandlerRuntime
  implements IdempotentHandlerRuntimeApi, OnModuleInit, OnModuleDestroy
{
  private readonly logger = new Logger(IdempotentHandlerRuntime.name);
  private processed?: MongooseProcessedEventStore;
  private failures?: MongooseConsumerFailureStore;

  constructor(
    private readonly connectionHost: OutboxConnectionHost,
    private readonly runner: TransactionRunner,
    @Inject(OUTBOX_RESOLVED_OPTIONS) private readonly options: ResolvedOutboxOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    if (IdempotentHandlerHost.hasDeclaredHandlers()) {
      const { processedModel, deadLetterModel } = this.models();
      if (this.options.createIndexes) {
        await ensureProcessedEventIndexes(
          processedModel,
          this.options.consumer.processedRetentionSeconds,
        );
        await ensureConsumerDeadLetterIndexes(deadLetterModel);
      }
    }
    IdempotentHandlerHost.register(this.options.connectionName, this);
  }

  onModuleDestroy(): void {
    IdempotentHandlerHost.unregister(this.options.connectionName, this);
  }

  consume(
    message: ConsumedMessage,
    handler: IdempotentHandlerSettings,
    invoke: (payload: unknown) => unknown,
    producer: unknown,
  ): Promise<ConsumeOutcome> {
    const { processed, failures } = this.stores();
    return consumeIdempotently(message, mergeWithDefaults(handler, this.options.consumer), invoke, {
      runner: this.runner,
      processed,
      failures,
      deadLetterPublisher: isProducerLike(producer)
        ? new ProducerDeadLetterPublisher(producer)
        : undefined,
      logger: this.logger,
    });
  }

  private models(): {
    processedModel: Model<ProcessedEventDocument>;
    deadLetterModel: Model<ConsumerDeadLetterDocument>;
  } {
    const connection = this.connectionHost.connection;
    const { collections } = this.options;
    return {
      processedModel: processedEventModel(connection, collections.processedEvents),
      deadLetterModel: consumerDeadLetterModel(connection, collections.consumerDeadLetters),
    };
  }

  private stores(): {
    processed: MongooseProcessedEventStore;
    failures: MongooseConsumerFailureStore;
  } {
    if (!this.processed || !this.failures) {
      const { processedModel, deadLetterModel } = this.models();
      this.processed = new MongooseProcessedEventStore(processedModel, () =>
        this.runner.currentSession(),
      );
      this.failures = new MongooseConsumerFailureStore(
        deadLetterModel,
        this.options.consumer.errorHistoryLimit,
        this.options.consumer.processedRetentionSeconds,
      );
    }
    return { processed: this.processed, failures: this.failures };
  }
}
