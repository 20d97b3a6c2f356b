/**
 * `nestjs-outbox/console`: the outbox console, an optional module (nothing is served unless you
 * import it). See docs/operations.md, "The outbox console".
 */
export { OutboxConsoleModule } from './console.module';
export { OutboxConsoleOptionsError } from './console.options';
export type { ConsoleAuthorize, OutboxConsoleOptions } from './console.options';
export type { ConsoleRequest } from './http/console-request';
export type { ConsoleRedact } from './render/redact';
export { CSRF_FIELD, CSRF_HEADER } from './security/csrf.tokens';
export { SESSION_COOKIE } from './security/session-cookie';
