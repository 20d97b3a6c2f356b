import type { Provider } from '@nestjs/common';
import { IdempotentHandlerRuntime } from './idempotent-handler.runtime';

/** Providers `OutboxModule` registers for `@IdempotentHandler` (owned by lib/consumer). */
export const CONSUMER_PROVIDERS: Provider[] = [IdempotentHandlerRuntime];
export const CONSUMER_EXPORTS: Provider[] = [];
