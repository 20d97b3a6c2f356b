import { RuntimeRegistry } from '../../common/runtime.registry';
import type { ConsumeOutcome } from '../consume.ports';
import type { BatchResult } from '../batch/batch-apply.flow';
import type { ResolvedConsumerBatchOptions } from '../batch/consumer-batch.options';
import type { IdempotentHandlerSettings } from '../idempotent-handler.options';
import type { KafkaDelivery } from './kafka-delivery';

/** What an `@IdempotentHandler` method calls at run time: its `OutboxModule`'s runtime. */
export interface IdempotentHandlerRuntimeApi {
  /** One delivery to its end; throws only `ConsumerRetryError` (delivered again). */
  consume(
    delivery: KafkaDelivery,
    settings: IdempotentHandlerSettings,
    invoke: (payload: unknown) => unknown,
  ): Promise<ConsumeOutcome>;
  /** The `consumer.batch` limits of its module. */
  readonly batchLimits: ResolvedConsumerBatchOptions;
  /** Consecutive events of one consumer in one transaction (see `applyBatch`). */
  applyBatch(
    handlers: readonly IdempotentHandlerSettings[],
    headers: readonly (Record<string, unknown> | undefined)[],
    deliverAll: () => Promise<void>,
  ): Promise<BatchResult>;
  /** A failure raised before the method ran; throws only `ConsumerRetryError`. */
  consumeRejected(
    delivery: KafkaDelivery,
    settings: IdempotentHandlerSettings,
    error: unknown,
  ): Promise<ConsumeOutcome>;
}

/**
 * Which runtime serves each decorated method, keyed by the method's settings object (one per
 * decorated method). Bound by the `OutboxModule`s' explorers at bootstrap (each binds the
 * handlers it found for its connection), unbound when they are destroyed; when two running
 * applications bind the same method (tests), the latest one serves it.
 */
export const IdempotentHandlerBindings = new RuntimeRegistry<
  IdempotentHandlerSettings,
  IdempotentHandlerRuntimeApi
>();
