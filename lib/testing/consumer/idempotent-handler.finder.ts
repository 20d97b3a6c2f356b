import { Injectable, Logger } from '@nestjs/common';
import type { OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import {
  bindIdempotentHandlers,
  discoverIdempotentHandlers,
  unbindIdempotentHandlers,
} from '../../consumer/idempotent-handler.bootstrap';
import { IdempotentHandlerMetadataAccessor } from '../../consumer/idempotent-handler.metadata-accessor';
import type { IdempotentHandlerSettings } from '../../consumer/idempotent-handler.options';
import { inProcessCalls } from '../../operations/in-process/idempotent-handler.calls';
import type { IdempotentHandlerCall } from '../../operations/in-process/idempotent-handler.calls';
import { InMemoryConsumerRuntime } from './in-memory-consumer.runtime';

/**
 * Binds the app's `@IdempotentHandler` methods to the in-memory consumer runtime at `init()`,
 * through the same checks as `OutboxModule`'s explorer (`bindIdempotentHandlers`): what
 * production refuses at bootstrap, `init()` refuses here with the same
 * `IdempotentHandlerBootstrapError`. Lists the handlers `OutboxTesting.drain()` calls.
 */
@Injectable()
export class IdempotentHandlerFinder implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('IdempotentHandler');
  private bound: IdempotentHandlerSettings[] = [];
  private found: IdempotentHandlerCall[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly accessor: IdempotentHandlerMetadataAccessor,
    private readonly runtime: InMemoryConsumerRuntime,
  ) {}

  async onModuleInit(): Promise<void> {
    const { discovery, scanner, accessor, runtime, logger } = this;
    const handlers = discoverIdempotentHandlers(discovery, scanner, accessor);
    this.bound = await bindIdempotentHandlers({ discovery, handlers, accessor, runtime, logger });
    this.found = inProcessCalls(handlers);
  }

  onModuleDestroy(): void {
    unbindIdempotentHandlers(this.bound, this.runtime);
    this.bound = [];
    this.found = [];
  }

  handlers(): IdempotentHandlerCall[] {
    return this.found;
  }
}
