import { RuntimeRegistry } from '../common/runtime.registry';
import type { ConsumedMessage } from './consumed-message';
import type { ConsumeOutcome } from './idempotent-consume.flow';
import type { IdempotentHandlerSettings } from './idempotent-handler.options';

/** What `@IdempotentHandler` methods need at call time; provided by `OutboxModule`. */
export interface IdempotentHandlerRuntimeApi {
  consume(
    message: ConsumedMessage,
    handler: IdempotentHandlerSettings,
    invoke: (payload: unknown) => unknown,
    producer: unknown,
  ): Promise<ConsumeOutcome>;
}

/**
 * Bridge between `@IdempotentHandler` (applied when classes are defined) and the running
 * `OutboxModule`s, keyed by connection name like `@Transactional` (see `RuntimeRegistry`).
 */
class IdempotentHandlerRegistry extends RuntimeRegistry<IdempotentHandlerRuntimeApi> {
  private readonly declared = new Set<string>();

  /** Called by the decorator: `OutboxModule` prepares the consumer collections only if any exist. */
  declare(handler: string): void {
    this.declared.add(handler);
  }

  hasDeclaredHandlers(): boolean {
    return this.declared.size > 0;
  }
}

export const IdempotentHandlerHost = new IdempotentHandlerRegistry();
