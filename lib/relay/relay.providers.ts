import type { Provider } from '@nestjs/common';

/** Providers `OutboxModule` registers for the relay (owned by lib/relay). */
export const RELAY_PROVIDERS: Provider[] = [];
/** Of those, the ones the module exports (e.g. the relay and its metrics service). */
export const RELAY_EXPORTS: Provider[] = [];
