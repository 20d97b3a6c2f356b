import type { Provider } from '@nestjs/common';

/** Providers `OutboxModule` registers for `@IdempotentHandler` (owned by lib/consumer). */
export const CONSUMER_PROVIDERS: Provider[] = [];
export const CONSUMER_EXPORTS: Provider[] = [];
