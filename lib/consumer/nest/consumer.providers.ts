import type { Provider } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { OutboxConsumerMetrics } from '../flow/consumer.metrics';
import { IdempotentHandlerExplorer } from './idempotent-handler.explorer';
import { IdempotentHandlerMetadataAccessor } from './idempotent-handler.metadata-accessor';
import { IdempotentHandlerRuntime } from './idempotent-handler.runtime';

/**
 * Providers `OutboxModule` registers for `@IdempotentHandler` (owned by lib/consumer).
 * `DiscoveryService` and `MetadataScanner` are what `DiscoveryModule` provides (their only
 * dependency, Nest's `ModulesContainer`, is global), listed here so the module needs no import.
 */
export const CONSUMER_PROVIDERS: Provider[] = [
  DiscoveryService,
  MetadataScanner,
  OutboxConsumerMetrics,
  IdempotentHandlerMetadataAccessor,
  IdempotentHandlerRuntime,
  IdempotentHandlerExplorer,
];
export const CONSUMER_EXPORTS: Provider[] = [OutboxConsumerMetrics];
