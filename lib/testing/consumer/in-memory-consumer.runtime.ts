import { Inject, Injectable, Logger } from '@nestjs/common';
import { OUTBOX_CONSUMER_OPTIONS, OUTBOX_STORAGE_OPTIONS } from '../../common/outbox.constants';
import type { OutboxStorageOptions } from '../../common/outbox-storage.options';
import type {
  ConsumeOutcome,
  ConsumerFailureStore,
  DeadLetter,
  ProcessedEventStore,
} from '../../consumer/consume.ports';
import { OutboxConsumerMetrics } from '../../consumer/flow/consumer.metrics';
import { ConsumerSink } from '../../consumer/flow/consumer-sink';
import {
  consumeIdempotently,
  consumeRejected,
  RedeliveryRequired,
} from '../../consumer/flow/idempotent-consume.flow';
import type { ConsumeDeps } from '../../consumer/flow/idempotent-consume.flow';
import type { HandlerServingRuntime } from '../../consumer/nest/idempotent-handler.bindings';
import type { ResolvedConsumerOptions } from '../../consumer/consumer.options';
import { mergeWithDefaults } from '../../consumer/idempotent-handler.options';
import type { IdempotentHandlerSettings } from '../../consumer/idempotent-handler.options';
import { redeliver } from '../../consumer/nest/kafka-delivery';
import type { KafkaDelivery } from '../../consumer/nest/kafka-delivery';
import type { ConsumerDeadLetterDocument } from '../../documents/consumer-dead-letter.document';
import { TransactionRunner } from '../../transaction/transaction.runner';
import type { FakeSession } from '../fakes/fake-connection';

/** A message an `@IdempotentHandler` gave up on, in `OutboxTestingModule`. */
export type TestingConsumerDeadLetter = Pick<
  ConsumerDeadLetterDocument,
  'consumer' | 'eventId' | 'attempts' | 'lastError'
> & { reason: DeadLetter['reason'] };

/**
 * What `@IdempotentHandler` methods run on in `OutboxTestingModule`: the production consume flow
 * (dedupe by `(consumer, eventId)` in the handler's transaction, retries, failure counts, dead
 * letters) over in-memory transactions and records, with no wait between retries.
 */
@Injectable()
export class InMemoryConsumerRuntime implements HandlerServingRuntime {
  private readonly logger = new Logger('IdempotentHandler');
  /** Committed `(consumer, eventId)` records. */
  readonly processed = new Set<string>();
  readonly deadLetters: TestingConsumerDeadLetter[] = [];
  private readonly failures = new Map<string, number>();
  private readonly sink = new ConsumerSink(this.failureStore(), this.logger);

  constructor(
    private readonly runner: TransactionRunner,
    @Inject(OUTBOX_STORAGE_OPTIONS) private readonly options: OutboxStorageOptions,
    @Inject(OUTBOX_CONSUMER_OPTIONS) private readonly consumer: ResolvedConsumerOptions,
    private readonly metrics: OutboxConsumerMetrics,
  ) {}

  get connectionName(): string | undefined {
    return this.options.connectionName;
  }

  get processedEventsCollection(): string {
    return this.options.collections.processedEvents;
  }

  /** Nothing to prepare: the in-memory records are unique by construction. */
  async prepare(): Promise<boolean> {
    return true;
  }

  clear(): void {
    this.processed.clear();
    this.deadLetters.length = 0;
    this.failures.clear();
  }

  consume(
    delivery: KafkaDelivery,
    handler: IdempotentHandlerSettings,
    invoke: (payload: unknown) => unknown,
  ): Promise<ConsumeOutcome> {
    const settings = mergeWithDefaults(handler, this.consumer);
    return this.redeliverOn(delivery, settings.handler, () =>
      consumeIdempotently(delivery, settings, invoke, this.deps()),
    );
  }

  consumeRejected(
    delivery: KafkaDelivery,
    handler: IdempotentHandlerSettings,
    error: unknown,
  ): Promise<ConsumeOutcome> {
    const settings = mergeWithDefaults(handler, this.consumer);
    return this.redeliverOn(delivery, settings.handler, () =>
      consumeRejected(delivery, settings, error, this.deps()),
    );
  }

  private async redeliverOn(
    delivery: KafkaDelivery,
    handler: string,
    run: () => Promise<ConsumeOutcome>,
  ): Promise<ConsumeOutcome> {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof RedeliveryRequired)) throw error;
      throw redeliver(delivery, error.message, undefined, error.cause, { handler });
    }
  }

  private deps(): ConsumeDeps {
    return {
      runner: this.runner,
      processed: this.processedStore(),
      sink: this.sink,
      metrics: this.metrics,
      logger: this.logger,
      sleep: async () => undefined,
    };
  }

  private processedStore(): ProcessedEventStore {
    return {
      wasApplied: async (consumer, eventId) => this.processed.has(`${consumer}\u0000${eventId}`),
      insert: async (consumer, eventId) => {
        const key = `${consumer}\u0000${eventId}`;
        if (this.processed.has(key)) {
          throw Object.assign(new Error(`E11000 duplicate key ${consumer}/${eventId}`), {
            code: 11000,
          });
        }
        const session = this.runner.currentSession() as unknown as FakeSession | undefined;
        if (session) session.onCommit(() => this.processed.add(key));
        else this.processed.add(key);
      },
    };
  }

  private failureStore(): ConsumerFailureStore {
    return {
      recordFailure: async (consumer, eventId) => {
        const key = `${consumer}\u0000${eventId}`;
        const count = (this.failures.get(key) ?? 0) + 1;
        this.failures.set(key, count);
        return count;
      },
      clearFailures: async (consumer, eventId) => {
        this.failures.delete(`${consumer}\u0000${eventId}`);
      },
      deadLetter: async ({ consumer, eventId, reason, attempts, lastError }) => {
        this.deadLetters.push({ consumer, eventId, reason, attempts, lastError });
      },
    };
  }
}
