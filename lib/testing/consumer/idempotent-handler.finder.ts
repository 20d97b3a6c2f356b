import { Injectable } from '@nestjs/common';
import type { OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { IdempotentHandlerBindings } from '../../consumer/idempotent-handler.bindings';
import { findIdempotentHandlers } from '../../operations/in-process/idempotent-handler.calls';
import type { IdempotentHandlerCall } from '../../operations/in-process/idempotent-handler.calls';
import { InMemoryConsumerRuntime } from './in-memory-consumer.runtime';

/**
 * Finds the app's `@IdempotentHandler` methods at bootstrap and binds them to the in-memory
 * consumer runtime (as `OutboxModule`'s explorer binds them to the MongoDB one), for
 * `OutboxTesting.drain()`.
 */
@Injectable()
export class IdempotentHandlerFinder implements OnModuleInit, OnModuleDestroy {
  private found: IdempotentHandlerCall[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly runtime: InMemoryConsumerRuntime,
  ) {}

  onModuleInit(): void {
    this.found = findIdempotentHandlers(this.discovery, this.scanner);
    for (const { settings } of this.found) IdempotentHandlerBindings.bind(settings, this.runtime);
  }

  onModuleDestroy(): void {
    for (const { settings } of this.found) IdempotentHandlerBindings.unbind(settings, this.runtime);
    this.found = [];
  }

  handlers(): IdempotentHandlerCall[] {
    return this.found;
  }
}
