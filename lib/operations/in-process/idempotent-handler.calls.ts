import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { KafkaContext } from '@nestjs/microservices';
import { IDEMPOTENT_HANDLER_METADATA } from '../../common/outbox.constants';
import { substitutePayload } from '../../consumer/handler-arguments';
import type { IdempotentHandlerSettings } from '../../consumer/idempotent-handler.options';
import { handlerPatterns, rpcParametersOf } from '../../consumer/nest-internals';

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
    const prototype = Object.getPrototypeOf(instance) as object;
    for (const key of scanner.getAllMethodNames(prototype)) {
      const method = instance[key];
      if (typeof method !== 'function') continue;
      const settings = Reflect.getMetadata(IDEMPOTENT_HANDLER_METADATA, method) as
        IdempotentHandlerSettings | undefined;
      if (!settings) continue;
      const parameters = rpcParametersOf(prototype, key);
      found.push({
        name: `${instance.constructor.name}.${key}`,
        settings,
        patterns: handlerPatterns(method),
        call: async (data, context) => {
          // As Nest's transport does: the context at `@Ctx()`, the data at `@Payload()`.
          const args: unknown[] = [];
          if (parameters.contextIndex !== undefined) args[parameters.contextIndex] = context;
          return (method as (...a: unknown[]) => unknown).apply(
            instance,
            substitutePayload(args, parameters, data),
          );
        },
      });
    }
  }
  return found;
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
