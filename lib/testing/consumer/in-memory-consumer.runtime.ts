import { Inject, Injectable } from '@nestjs/common';
import { OUTBOX_CONSUMER_OPTIONS, OUTBOX_STORAGE_OPTIONS } from '../../common/outbox.constants';
import type { OutboxStorageOptions } from '../../common/outbox-storage.options';
import type {
  ConsumerFailureStore,
  DeadLetter,
  ProcessedEventStore,
} from '../../consumer/consume.ports';
import type { ResolvedConsumerOptions } from '../../consumer/consumer.options';
import { OutboxConsumerMetrics } from '../../consumer/flow/consumer.metrics';
import { ConsumerSink } from '../../consumer/flow/consumer-sink';
import { RedeliveryRequired } from '../../consumer/flow/idempotent-consume.flow';
import type { ConsumeDeps, ConsumeSettings } from '../../consumer/flow/idempotent-consume.flow';
import { ConsumeRuntime } from '../../consumer/nest/idempotent-handler.runtime';
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
export class InMemoryConsumerRuntime extends ConsumeRuntime {
  /** Committed `(consumer, eventId)` records. */
  readonly processed = new Set<string>();
  readonly deadLetters: TestingConsumerDeadLetter[] = [];
  private readonly failures = new Map<string, number>();
  private readonly sink = new ConsumerSink(this.failureStore(), this.logger);

  constructor(
    runner: TransactionRunner,
    @Inject(OUTBOX_STORAGE_OPTIONS) options: OutboxStorageOptions,
    @Inject(OUTBOX_CONSUMER_OPTIONS) consumer: ResolvedConsumerOptions,
    metrics: OutboxConsumerMetrics,
  ) {
    super(runner, options, consumer, metrics);
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

  /** `RedeliveryRequired` as a `ConsumerRetryError` (no partition to pause); any other error as it is. */
  protected unacknowledged(
    error: unknown,
    delivery: KafkaDelivery,
    settings: ConsumeSettings,
  ): unknown {
    if (!(error instanceof RedeliveryRequired)) return error;
    const context = { handler: settings.handler };
    return redeliver(delivery, error.message, undefined, error.cause, context);
  }

  protected deps(): ConsumeDeps {
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
    const store: ProcessedEventStore = {
      wasApplied: async (consumer, eventId) => this.processed.has(`${consumer}\u0000${eventId}`),
      appliedAmong: async (consumer, eventIds) =>
        eventIds.filter((eventId) => this.processed.has(`${consumer}\u0000${eventId}`)),
      insertMany: async (consumer, eventIds) => {
        if (new Set(eventIds).size !== eventIds.length) {
          throw Object.assign(new Error(`E11000 duplicate key in one batch of ${consumer}`), {
            code: 11000,
          });
        }
        for (const eventId of eventIds) await store.insert(consumer, eventId);
      },
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
    return store;
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
