import { Injectable } from '@nestjs/common';
import type { OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { PATTERN_METADATA } from '@nestjs/microservices/constants';
import { IDEMPOTENT_HANDLER_METADATA } from '../../common/outbox.constants';
import { IdempotentHandlerBindings } from '../../consumer/idempotent-handler.bindings';
import type { IdempotentHandlerSettings } from '../../consumer/idempotent-handler.options';
import { InMemoryConsumerRuntime } from './in-memory-consumer.runtime';

/** Nest's parameter types of RPC handlers (`RpcParamtype` in @nestjs/microservices). */
const RPC_PAYLOAD = 3;
const RPC_CONTEXT = 6;

/** One `@IdempotentHandler` method of the app, with what it listens to. */
export interface FoundHandler {
  /** `ClassName.methodName`. */
  name: string;
  settings: IdempotentHandlerSettings;
  /** The `@EventPattern` patterns: an event type (with `OutboxKafkaServer`) or a topic. */
  patterns: unknown[];
  /** Calls the method as Nest's Kafka transport would: data and context in their parameters. */
  call(data: unknown, context: unknown): Promise<unknown>;
}

/**
 * Finds the app's `@IdempotentHandler` methods (on controllers and providers) at bootstrap,
 * binds them to the in-memory consumer runtime (as `OutboxModule`'s explorer binds them to the
 * MongoDB one), and knows how to call them, for `OutboxTesting.drain()`.
 */
@Injectable()
export class IdempotentHandlerFinder implements OnModuleInit, OnModuleDestroy {
  private found: FoundHandler[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly runtime: InMemoryConsumerRuntime,
  ) {}

  onModuleInit(): void {
    this.found = this.scan();
    for (const { settings } of this.found) IdempotentHandlerBindings.bind(settings, this.runtime);
  }

  onModuleDestroy(): void {
    for (const { settings } of this.found) IdempotentHandlerBindings.unbind(settings, this.runtime);
    this.found = [];
  }

  handlers(): FoundHandler[] {
    return this.found;
  }

  private scan(): FoundHandler[] {
    const found: FoundHandler[] = [];
    const wrappers = [...this.discovery.getControllers(), ...this.discovery.getProviders()];
    const seen = new Set<object>();
    for (const wrapper of wrappers) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || seen.has(instance)) continue;
      seen.add(instance);
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const key of this.scanner.getAllMethodNames(prototype)) {
        const method = instance[key];
        if (typeof method !== 'function') continue;
        const settings = Reflect.getMetadata(IDEMPOTENT_HANDLER_METADATA, method) as
          IdempotentHandlerSettings | undefined;
        if (!settings) continue;
        const patterns = [Reflect.getMetadata(PATTERN_METADATA, method) ?? []].flat();
        const routeArgs = (Reflect.getMetadata(ROUTE_ARGS_METADATA, instance.constructor, key) ??
          {}) as Record<string, { index: number; data?: unknown }>;
        found.push({
          name: `${instance.constructor.name}.${key}`,
          settings,
          patterns,
          call: async (data, context) =>
            (method as (...args: unknown[]) => unknown).apply(
              instance,
              argumentsFor(routeArgs, data, context),
            ),
        });
      }
    }
    return found;
  }
}

/** The method's arguments: `@Payload()` and `@Ctx()` where declared, else `(data, context)`. */
function argumentsFor(
  routeArgs: Record<string, { index: number; data?: unknown }>,
  data: unknown,
  context: unknown,
): unknown[] {
  const entries = Object.entries(routeArgs);
  if (entries.length === 0) return [data, context];
  const args: unknown[] = [];
  for (const [key, { index, data: property }] of entries) {
    const type = Number(key.split(':')[0]);
    if (type === RPC_PAYLOAD) {
      args[index] =
        typeof property === 'string' && data && typeof data === 'object'
          ? (data as Record<string, unknown>)[property]
          : data;
    } else if (type === RPC_CONTEXT) args[index] = context;
  }
  return args;
}
