import { Inject, Injectable, Logger } from '@nestjs/common';
import type { OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { OUTBOX_RESOLVED_OPTIONS } from '../../common/outbox.constants';
import type { ConsumedMessage } from '../../consumer/consumed-message';
import { consumeIdempotently } from '../../consumer/idempotent-consume.flow';
import type {
  ConsumeOutcome,
  ConsumerFailureStore,
  DeadLetter,
  FailureInfo,
  ProcessedEventStore,
} from '../../consumer/idempotent-consume.flow';
import { IdempotentHandlerHost } from '../../consumer/idempotent-handler.host';
import type { IdempotentHandlerRuntimeApi } from '../../consumer/idempotent-handler.host';
import { mergeWithDefaults } from '../../consumer/idempotent-handler.options';
import type { IdempotentHandlerSettings } from '../../consumer/idempotent-handler.options';
import type { ResolvedOutboxOptions } from '../../options/resolved-options';
import { TransactionRunner } from '../../transaction/transaction.runner';
import type { FakeSession } from '../fakes/fake-connection';

/** A message an `@IdempotentHandler` gave up on, in `OutboxTestingModule`. */
export interface TestingConsumerDeadLetter {
  consumer: string;
  eventId: string | null;
  reason: DeadLetter['reason'];
  detail: string;
}

/**
 * What `@IdempotentHandler` methods run on in `OutboxTestingModule`: the production consume flow
 * (dedupe by `(consumer, eventId)` in the handler's transaction, failure counts, dead letters)
 * over in-memory transactions and records.
 */
@Injectable()
export class InMemoryConsumerRuntime
  implements IdempotentHandlerRuntimeApi, OnModuleInit, OnModuleDestroy
{
  private readonly logger = new Logger('IdempotentHandler');
  /** Committed `(consumer, eventId)` records. */
  readonly processed = new Set<string>();
  readonly deadLetters: TestingConsumerDeadLetter[] = [];
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly runner: TransactionRunner,
    @Inject(OUTBOX_RESOLVED_OPTIONS) private readonly options: ResolvedOutboxOptions,
  ) {}

  onModuleInit(): void {
    IdempotentHandlerHost.register(this.options.connectionName, this);
  }

  onModuleDestroy(): void {
    IdempotentHandlerHost.unregister(this.options.connectionName, this);
  }

  clear(): void {
    this.processed.clear();
    this.deadLetters.length = 0;
    this.failures.clear();
  }

  consume(
    message: ConsumedMessage,
    handler: IdempotentHandlerSettings,
    invoke: (payload: unknown) => unknown,
  ): Promise<ConsumeOutcome> {
    return consumeIdempotently(message, mergeWithDefaults(handler, this.options.consumer), invoke, {
      runner: this.runner,
      processed: this.processedStore(),
      failures: this.failureStore(),
      logger: this.logger,
    });
  }

  private processedStore(): ProcessedEventStore {
    return {
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
      recordFailure: async (consumer: string, eventId: string, _failure: FailureInfo) => {
        const key = `${consumer}\u0000${eventId}`;
        const count = (this.failures.get(key) ?? 0) + 1;
        this.failures.set(key, count);
        return count;
      },
      clearFailures: async (consumer: string, eventId: string) => {
        this.failures.delete(`${consumer}\u0000${eventId}`);
      },
      deadLetter: async (letter: DeadLetter) => {
        this.deadLetters.push({
          consumer: letter.consumer,
          eventId: letter.eventId,
          reason: letter.reason,
          detail: letter.detail,
        });
      },
    };
  }
}
