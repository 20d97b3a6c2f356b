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
 * Static bridge between `@IdempotentHandler` (applied when classes are defined) and the running
 * `OutboxModule`: filled in `onModuleInit`, emptied in `onModuleDestroy`. With several apps in one
 * process (tests), the most recently initialized one serves.
 */
export class IdempotentHandlerHost {
  private static readonly runtimes: IdempotentHandlerRuntimeApi[] = [];
  private static readonly declared = new Set<string>();

  /** Called by the decorator: `OutboxModule` prepares the consumer collections only if any exist. */
  static declare(handler: string): void {
    this.declared.add(handler);
  }

  static hasDeclaredHandlers(): boolean {
    return this.declared.size > 0;
  }

  static register(runtime: IdempotentHandlerRuntimeApi): void {
    this.runtimes.push(runtime);
  }

  static unregister(runtime: IdempotentHandlerRuntimeApi): void {
    const index = this.runtimes.lastIndexOf(runtime);
    if (index >= 0) this.runtimes.splice(index, 1);
  }

  static current(): IdempotentHandlerRuntimeApi | undefined {
    return this.runtimes[this.runtimes.length - 1];
  }

  /** Forgets every runtime (tests). */
  static reset(): void {
    this.runtimes.length = 0;
  }
}
