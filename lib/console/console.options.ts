import type { CanActivate, Type } from '@nestjs/common';
import { OutboxError } from '../common/errors/outbox.error';
import type { ConsoleRequest } from './http/console-request';
import type { ConsoleRedact } from './render/redact';

/** Who may use the console: a name (logged with every action), or no one (falsy: 401). */
export type ConsoleAuthorize = (
  request: ConsoleRequest,
) => string | false | null | undefined | Promise<string | false | null | undefined>;

/** `OutboxConsoleModule.forRoot(...)`. */
export interface OutboxConsoleOptions {
  /** Where the console is mounted in your HTTP app (after any global prefix). Default `outbox`. */
  path?: string;
  /**
   * Decides, for every request, who is asking: a name to allow (it is logged with each action),
   * or a falsy value to refuse (401, no data). May throw `ForbiddenException` (403). Required
   * unless `guards` are given.
   */
  authorize?: ConsoleAuthorize;
  /** Your own Nest guards, run before `authorize` on every console route. */
  guards?: Array<Type<CanActivate> | CanActivate>;
  /** With `guards` and no `authorize`: the name of who is asking (default `request.user`'s id, name or username). */
  identify?: (request: ConsoleRequest) => string | undefined;
  /** Requeue, purge and cancel buttons and routes. Default false: read-only. */
  actions?: boolean;
  /** Payload fields hidden everywhere the console shows a payload or message value. */
  redact?: ConsoleRedact;
  /**
   * Key that signs the session cookie and its CSRF tokens (HMAC-SHA256). Default: random per
   * process, so a restart (or another instance behind a load balancer) asks for a fresh page
   * before an action. Set the same secret on every instance to avoid that.
   */
  secret?: string;
  /** Consumer names applied in other apps, so an event's page looks up their records too. */
  consumers?: string[];
  /** Counts above this are shown as "N+" (each count reads at most this many index entries). Default 10,000. */
  countLimit?: number;
  /** Rows per page of the lists. Default 50. */
  pageSize?: number;
  /** How often the relay's metrics are sampled for the charts (15 minutes are kept). Default 5,000 ms. */
  sampleIntervalMs?: number;
  /**
   * Create the index the event page's aggregate lookup reads (`outbox_console_by_aggregate`)
   * at bootstrap. Default true.
   */
  createIndexes?: boolean;
}

export type ResolvedConsoleOptions = Required<
  Omit<OutboxConsoleOptions, 'authorize' | 'identify' | 'redact' | 'secret'>
> &
  Pick<OutboxConsoleOptions, 'authorize' | 'identify' | 'redact'> & { secret: Buffer };

/** Thrown by `OutboxConsoleModule.forRoot` for options it cannot start with. */
export class OutboxConsoleOptionsError extends OutboxError {
  constructor(option: string, problem: string) {
    super(`OutboxConsoleModule: ${option} ${problem}`, 'OUTBOX_CONSOLE_OPTIONS', { option });
  }
}

function positiveInt(name: string, value: number | undefined, fallback: number, max: number) {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1 || v > max) {
    throw new OutboxConsoleOptionsError(
      name,
      `must be an integer from 1 to ${max}, got ${String(value)}`,
    );
  }
  return v;
}

/** Checks the options; the console refuses to start without `authorize` or `guards`. */
export function resolveConsoleOptions(
  options: OutboxConsoleOptions,
  randomSecret: () => Buffer,
): ResolvedConsoleOptions {
  const guards = options.guards ?? [];
  if (typeof options.authorize !== 'function' && guards.length === 0) {
    throw new OutboxConsoleOptionsError(
      'authorize',
      'is required: give authorize(request) => user name | false, or guards: [YourAuthGuard]. ' +
        'The console shows your events and can act on them; it never runs open.',
    );
  }
  const path = (options.path ?? 'outbox').replace(/^\/+|\/+$/g, '');
  if (!/^[A-Za-z0-9._~\-/]+$/.test(path)) {
    throw new OutboxConsoleOptionsError(
      'path',
      `must be a URL path, got ${JSON.stringify(options.path)}`,
    );
  }
  if (
    options.secret !== undefined &&
    (typeof options.secret !== 'string' || options.secret.length < 16)
  ) {
    throw new OutboxConsoleOptionsError('secret', 'must be a string of at least 16 characters');
  }
  const redact = options.redact;
  if (redact !== undefined && typeof redact !== 'function' && !Array.isArray(redact)) {
    throw new OutboxConsoleOptionsError('redact', 'must be an array of field paths or a function');
  }
  return {
    path,
    authorize: options.authorize,
    guards,
    identify: options.identify,
    actions: options.actions === true,
    redact,
    secret: options.secret ? Buffer.from(options.secret, 'utf8') : randomSecret(),
    consumers: [...(options.consumers ?? [])],
    countLimit: positiveInt('countLimit', options.countLimit, 10_000, 1_000_000),
    pageSize: positiveInt('pageSize', options.pageSize, 50, 500),
    sampleIntervalMs: positiveInt('sampleIntervalMs', options.sampleIntervalMs, 5_000, 60_000),
    createIndexes: options.createIndexes ?? true,
  };
}
