import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { bindIdempotentHandlers, unbindIdempotentHandlers } from './idempotent-handler.bootstrap';
import { IdempotentHandlerMetadataAccessor } from './idempotent-handler.metadata-accessor';
import type { IdempotentHandlerSettings } from './idempotent-handler.options';
import { IdempotentHandlerRuntime } from './idempotent-handler.runtime';

/**
 * Binds the app's `@IdempotentHandler` methods served by this `OutboxModule` to its runtime at
 * bootstrap, after the checks of `bindIdempotentHandlers` (which fail the bootstrap with an
 * `IdempotentHandlerBootstrapError` naming the handler), and unbinds them at shutdown.
 */
@Injectable()
export class IdempotentHandlerExplorer implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('IdempotentHandler');
  private bound: IdempotentHandlerSettings[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly accessor: IdempotentHandlerMetadataAccessor,
    private readonly runtime: IdempotentHandlerRuntime,
  ) {}

  async onModuleInit(): Promise<void> {
    const { discovery, scanner, accessor, runtime, logger } = this;
    this.bound = await bindIdempotentHandlers({ discovery, scanner, accessor, runtime, logger });
  }

  onModuleDestroy(): void {
    unbindIdempotentHandlers(this.bound, this.runtime);
    this.bound = [];
  }
}
