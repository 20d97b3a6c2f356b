import type { ConsumeOutcome } from './consume.ports';
import type { IdempotentHandlerSettings } from './idempotent-handler.options';
import type { KafkaDelivery } from './kafka-delivery';

/** What an `@IdempotentHandler` method calls at run time: its `OutboxModule`'s runtime. */
export interface IdempotentHandlerRuntimeApi {
  /** One delivery to its end; throws only `ConsumerRetryError` (delivered again). */
  consume(
    delivery: KafkaDelivery,
    settings: IdempotentHandlerSettings,
    invoke: (payload: unknown) => unknown,
  ): Promise<ConsumeOutcome>;
  /** A failure raised before the method ran; throws only `ConsumerRetryError`. */
  consumeRejected(
    delivery: KafkaDelivery,
    settings: IdempotentHandlerSettings,
    error: unknown,
  ): Promise<ConsumeOutcome>;
}

/**
 * Which runtime serves each decorated method. Filled by the `OutboxModule`s' explorers at
 * bootstrap (each binds the handlers it found for its connection) and emptied when they are
 * destroyed; keyed by the method's settings object (one per decorated method), so nothing is
 * registered when a class is merely defined. When two running applications bind the same method
 * (tests), the latest one serves it.
 */
class HandlerBindings {
  private readonly runtimes = new WeakMap<
    IdempotentHandlerSettings,
    IdempotentHandlerRuntimeApi[]
  >();

  bind(settings: IdempotentHandlerSettings, runtime: IdempotentHandlerRuntimeApi): void {
    this.runtimes.set(settings, [...(this.runtimes.get(settings) ?? []), runtime]);
  }

  unbind(settings: IdempotentHandlerSettings, runtime: IdempotentHandlerRuntimeApi): void {
    const left = (this.runtimes.get(settings) ?? []).filter((r) => r !== runtime);
    if (left.length > 0) this.runtimes.set(settings, left);
    else this.runtimes.delete(settings);
  }

  resolve(settings: IdempotentHandlerSettings): IdempotentHandlerRuntimeApi | undefined {
    return this.runtimes.get(settings)?.at(-1);
  }
}

export const IdempotentHandlerBindings = new HandlerBindings();
