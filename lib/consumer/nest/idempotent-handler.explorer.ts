import { Inject, Injectable, Logger } from '@nestjs/common';
import type { OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { IdempotentHandlerBootstrapError, type IdempotentHandlerProblem } from '../consumer.errors';
import { IdempotentHandlerBindings } from './idempotent-handler.bindings';
import { IdempotentHandlerMetadataAccessor } from './idempotent-handler.metadata-accessor';
import type { IdempotentHandlerSettings } from '../idempotent-handler.options';
import { IdempotentHandlerRuntime, type ConsumeRuntime } from './idempotent-handler.runtime';
import { patternHandlerKind } from './nest-internals';

/** What Nest's `DiscoveryService` lists (its `InstanceWrapper`, named without a deep import). */
type InstanceWrapper = ReturnType<DiscoveryService['getProviders']>[number];

/** One `@IdempotentHandler` method of the app, as discovered at bootstrap. */
export interface DiscoveredHandler {
  settings: IdempotentHandlerSettings;
  /** The decorated method (its `@IdempotentHandler` wrapper). */
  method: object;
  key: string;
  /** The instance Nest made of its class; undefined for a class not instantiated (yet). */
  instance?: object;
  inController: boolean;
}

/**
 * Finds the app's `@IdempotentHandler` methods once, at bootstrap, checks each, prepares the
 * runtime of this module (`OutboxModule`'s, or `OutboxTestingModule`'s in-memory one) for the
 * handlers it serves and binds them to it; unbinds them at shutdown. What it found,
 * `handlers()`, is what dead-letter requeue and `OutboxTesting.drain()` call.
 *
 * Throws an `IdempotentHandlerBootstrapError` naming the handler when one is not an
 * `@EventPattern` handler of a controller, has a `@UseFilters` consulted before its own filter,
 * names a `connectionName` no module serves, shares its consumer name with another handler of the
 * same module, or when the runtime reports the unique `(consumer, eventId)` index missing.
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
    @Inject(IdempotentHandlerRuntime) private readonly runtime: ConsumeRuntime,
  ) {}

  /** Every `@IdempotentHandler` method of the app (all connections), as found at bootstrap. */
  handlers(): readonly DiscoveredHandler[] {
    return this.found;
  }

  async onModuleInit(): Promise<void> {
    const { discovery, accessor, runtime, logger } = this;
    this.found = discoverIdempotentHandlers(discovery, this.scanner, accessor);
    // A runtime may be listed twice (`OutboxTestingModule` provides its own under the class token).
    const instances = new Set(
      discovery.getProviders().map((wrapper) => wrapper.instance as unknown),
    );
    const runtimes = [...instances].filter(
      (instance): instance is ConsumeRuntime =>
        instance instanceof (runtime.constructor as abstract new () => unknown),
    );
    const mine: DiscoveredHandler[] = [];
    for (const found of this.found) {
      checkPlacement(found, accessor);
      if (servingRuntime(found.settings, runtimes) === runtime) mine.push(found);
    }
    if (mine.length === 0) return;
    checkUniqueNames(mine);
    if (!(await runtime.prepare())) {
      throw new IdempotentHandlerBootstrapError(
        mine.map((h) => h.settings.handler).join(', '),
        'missing-unique-index',
        `the collection '${runtime.processedEventsCollection}' has no unique index on { consumer: 1, eventId: 1 } ` +
          '(createIndexes is false), so nothing would be deduplicated',
        `Create it (db.${runtime.processedEventsCollection}.createIndex({ consumer: 1, eventId: 1 }, { unique: true })), or set createIndexes: true.`,
      );
    }
    const unnamed = mine.filter((h) => !h.settings.consumerNamed).map((h) => h.settings.consumer);
    if (unnamed.length > 0) {
      logger.warn(
        `Consumer names taken from class and method names: ${unnamed.join(', ')}. A rename, or a ` +
          'minifier, changes them and the events are applied again: set @IdempotentHandler({ consumer }).',
      );
    }
    for (const { settings } of mine) IdempotentHandlerBindings.bind(settings, runtime);
    this.bound = mine.map((h) => h.settings);
  }

  onModuleDestroy(): void {
    for (const settings of this.bound) IdempotentHandlerBindings.unbind(settings, this.runtime);
    this.bound = [];
    this.found = [];
  }
}

/**
 * Every `@IdempotentHandler` method of every controller and provider, once each
 * (`DiscoveryService`, as `@nestjs/schedule` finds `@Cron` methods).
 */
function discoverIdempotentHandlers(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
  accessor: IdempotentHandlerMetadataAccessor,
): DiscoveredHandler[] {
  const found = new Map<IdempotentHandlerSettings, DiscoveredHandler>();
  const scan = (wrappers: InstanceWrapper[], inController: boolean) => {
    for (const wrapper of wrappers) {
      const prototype = prototypeOf(wrapper);
      if (!prototype) continue;
      const made = wrapper.instance as unknown;
      const instance = typeof made === 'object' && made !== null ? made : undefined;
      for (const key of scanner.getAllMethodNames(prototype)) {
        const method = (prototype as Record<string, unknown>)[key] as object;
        const settings = accessor.settingsOf(method);
        if (!settings) continue;
        const known = found.get(settings);
        if (!known) found.set(settings, { settings, method, key, instance, inController });
        else known.instance ??= instance;
      }
    }
  };
  scan(discovery.getControllers(), true);
  scan(discovery.getProviders(), false);
  return [...found.values()];
}

function prototypeOf(wrapper: InstanceWrapper): object | undefined {
  if (wrapper.isAlias) return undefined;
  const instance = wrapper.instance as unknown;
  if (typeof instance === 'object' && instance !== null)
    return Object.getPrototypeOf(instance) as object;
  const metatype = wrapper.metatype as { prototype?: unknown } | null | undefined;
  return !wrapper.inject && typeof metatype?.prototype === 'object'
    ? (metatype.prototype as object)
    : undefined;
}

function checkPlacement(
  { settings, method, inController }: DiscoveredHandler,
  accessor: IdempotentHandlerMetadataAccessor,
): void {
  const fail = (problem: IdempotentHandlerProblem, detail: string, fix: string) => {
    throw new IdempotentHandlerBootstrapError(settings.handler, problem, detail, fix);
  };
  if (!inController) {
    fail(
      'not-a-controller',
      'it is on a provider, and Nest delivers messages only to controller methods',
      "Move the method to a @Controller() listed in a module's controllers, with @EventPattern.",
    );
  }
  const kind = patternHandlerKind(method);
  if (kind !== 'event') {
    fail(
      'not-an-event-handler',
      kind === 'message'
        ? 'it is a @MessagePattern (request-reply) handler'
        : 'the method has no @EventPattern, so no message ever reaches it',
      'Use it on an @EventPattern(...) handler.',
    );
  }
  if (accessor.hasFilterBeforeOwn(method)) {
    fail(
      'filter-order',
      "a @UseFilters() written above it binds a filter that Nest consults before the handler's own, and" +
        ' that filter could acknowledge failed messages',
      'Write @IdempotentHandler() above @UseFilters(), or bind the filter to the controller class.',
    );
  }
}

/** The runtime that serves `settings`: by connection name, or the default / only one. */
function servingRuntime(
  settings: IdempotentHandlerSettings,
  runtimes: ConsumeRuntime[],
): ConsumeRuntime {
  const { connectionName } = settings;
  const named = runtimes.filter((r) => r.connectionName === connectionName);
  if (named.length > 0) return named[named.length - 1];
  if (connectionName === undefined && runtimes.length === 1) return runtimes[0];
  const known = runtimes
    .map((r) => (r.connectionName ? `'${r.connectionName}'` : '(default)'))
    .join(', ');
  throw new IdempotentHandlerBootstrapError(
    settings.handler,
    'unknown-connection',
    connectionName === undefined
      ? `it names no connectionName, and none of the OutboxModules (${known}) is on the default connection`
      : `no OutboxModule serves connectionName '${connectionName}' (OutboxModules: ${known})`,
    'Set @IdempotentHandler({ connectionName }) to the connectionName of an OutboxModule.forRoot(...).',
  );
}

function checkUniqueNames(handlers: DiscoveredHandler[]): void {
  const byName = new Map<string, string>();
  for (const { settings } of handlers) {
    const other = byName.get(settings.consumer);
    if (other !== undefined) {
      throw new IdempotentHandlerBootstrapError(
        `${other} and ${settings.handler}`,
        'duplicate-consumer',
        `both use the consumer name "${settings.consumer}" on one database, so each would skip the events the other applied`,
        'Give each handler its own @IdempotentHandler({ consumer: "..." }).',
      );
    }
    byName.set(settings.consumer, settings.handler);
  }
}
