import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import {
  bindIdempotentHandlers,
  discoverIdempotentHandlers,
  unbindIdempotentHandlers,
  type DiscoveredHandler,
  type HandlerServingRuntime,
} from './idempotent-handler.bootstrap';
import { IdempotentHandlerMetadataAccessor } from './idempotent-handler.metadata-accessor';
import type { IdempotentHandlerSettings } from './idempotent-handler.options';
import { IdempotentHandlerRuntime } from './idempotent-handler.runtime';

/**
 * Finds the app's `@IdempotentHandler` methods once, at bootstrap, and binds the ones this
 * module serves to its runtime (`OutboxModule`'s, or `OutboxTestingModule`'s in-memory one),
 * after the checks of `bindIdempotentHandlers` (which fail the bootstrap with an
 * `IdempotentHandlerBootstrapError` naming the handler); unbinds them at shutdown. What it found,
 * `handlers()`, is what dead-letter requeue and `OutboxTesting.drain()` call.
 */
@Injectable()
export class IdempotentHandlerExplorer implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('IdempotentHandler');
  private found: DiscoveredHandler[] = [];
  private bound: IdempotentHandlerSettings[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly accessor: IdempotentHandlerMetadataAccessor,
    @Inject(IdempotentHandlerRuntime) private readonly runtime: HandlerServingRuntime,
  ) {}

  async onModuleInit(): Promise<void> {
    const { discovery, scanner, accessor, runtime, logger } = this;
    this.found = discoverIdempotentHandlers(discovery, scanner, accessor);
    const handlers = this.found;
    this.bound = await bindIdempotentHandlers({ discovery, handlers, accessor, runtime, logger });
  }

  onModuleDestroy(): void {
    unbindIdempotentHandlers(this.bound, this.runtime);
    this.bound = [];
    this.found = [];
  }

  /** Every `@IdempotentHandler` method of the app (all connections), as found at bootstrap. */
  handlers(): readonly DiscoveredHandler[] {
    return this.found;
  }
}
