import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { KafkaContext } from '@nestjs/microservices';
import { PATTERN_METADATA } from '@nestjs/microservices/constants';
import { IDEMPOTENT_HANDLER_METADATA } from '../../common/outbox.constants';
import type { IdempotentHandlerSettings } from '../../consumer/idempotent-handler.options';

/** Nest's parameter types of RPC handlers (`RpcParamtype` in @nestjs/microservices). */
const RPC_PAYLOAD = 3;
const RPC_CONTEXT = 6;

/** One `@IdempotentHandler` method of the app, and how to call it in process. */
export interface IdempotentHandlerCall {
  /** `ClassName.methodName`. */
  name: string;
  settings: IdempotentHandlerSettings;
  /** The `@EventPattern` patterns: an event type (with `OutboxKafkaServer`) or a topic. */
  patterns: unknown[];
  /**
   * Calls the decorated method as Nest's Kafka transport would (data and context in their
   * parameters): the `@IdempotentHandler` wrapper then runs the delivery on its bound runtime.
   */
  call(data: unknown, context: KafkaContext): Promise<unknown>;
}

/** The app's `@IdempotentHandler` methods, on controllers and providers, once each. */
export function findIdempotentHandlers(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
): IdempotentHandlerCall[] {
  const found: IdempotentHandlerCall[] = [];
  const seen = new Set<object>();
  for (const wrapper of [...discovery.getControllers(), ...discovery.getProviders()]) {
    const instance = wrapper.instance as Record<string, unknown> | undefined;
    if (!instance || typeof instance !== 'object' || seen.has(instance)) continue;
    seen.add(instance);
    for (const key of scanner.getAllMethodNames(Object.getPrototypeOf(instance) as object)) {
      const method = instance[key];
      if (typeof method !== 'function') continue;
      const settings = Reflect.getMetadata(IDEMPOTENT_HANDLER_METADATA, method) as
        IdempotentHandlerSettings | undefined;
      if (!settings) continue;
      const routeArgs = (Reflect.getMetadata(ROUTE_ARGS_METADATA, instance.constructor, key) ??
        {}) as Record<string, { index: number; data?: unknown }>;
      found.push({
        name: `${instance.constructor.name}.${key}`,
        settings,
        patterns: [Reflect.getMetadata(PATTERN_METADATA, method) ?? []].flat(),
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

/** A Kafka message as kafkajs hands it to Nest (key, value and headers as Buffers). */
export interface InProcessMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: Buffer | null;
  headers: Readonly<Record<string, string>>;
  timestamp: string;
}

/** The `KafkaContext` Nest's Kafka transport would build for `message` (no consumer, producer or heartbeat). */
export function kafkaContextFor(message: InProcessMessage): KafkaContext {
  const headers: Record<string, Buffer> = {};
  for (const [name, value] of Object.entries(message.headers)) headers[name] = Buffer.from(value);
  const raw = {
    key: message.key === null ? null : Buffer.from(message.key),
    value: message.value,
    headers,
    offset: message.offset,
    timestamp: message.timestamp,
    attributes: 0,
    size: 0,
  };
  const args = [raw, message.partition, message.topic, undefined, async () => undefined, undefined];
  return new KafkaContext(args as unknown as ConstructorParameters<typeof KafkaContext>[0]);
}
