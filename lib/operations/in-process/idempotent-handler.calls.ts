import { KafkaContext } from '@nestjs/microservices';
import type { DiscoveredHandler } from '../../consumer/nest/idempotent-handler.explorer';
import type { IdempotentHandlerSettings } from '../../consumer/idempotent-handler.options';
import {
  handlerPatterns,
  rpcParametersOf,
  substitutePayload,
} from '../../consumer/nest/nest-internals';

/** One `@IdempotentHandler` method of the app, and how to call it in process. */
export interface IdempotentHandlerCall {
  name: string;
  settings: IdempotentHandlerSettings;
  /** The `@EventPattern` patterns: an event type (with `OutboxKafkaServer`) or a topic. */
  patterns: unknown[];
  /**
   * Calls the decorated method with `message` as Nest's Kafka transport would (the parsed value
   * and the `KafkaContext` in their parameters): the `@IdempotentHandler` wrapper then runs the
   * delivery on its bound runtime.
   */
  call(message: InProcessMessage): Promise<unknown>;
}

/**
 * How to call, in process, the `@IdempotentHandler` methods the explorer found at bootstrap
 * (`IdempotentHandlerExplorer.handlers()`): those of classes Nest made an instance of.
 */
export function inProcessCalls(handlers: readonly DiscoveredHandler[]): IdempotentHandlerCall[] {
  return handlers.flatMap(({ settings, method, key, instance }) => {
    if (!instance) return [];
    const parameters = rpcParametersOf(Object.getPrototypeOf(instance) as object, key);
    const call = async (message: InProcessMessage) => {
      // As Nest's transport does: the context at `@Ctx()`, the data at `@Payload()`.
      const args: unknown[] = [];
      if (parameters.contextIndex !== undefined) {
        args[parameters.contextIndex] = kafkaContextFor(message);
      }
      return (method as (...a: unknown[]) => unknown).apply(
        instance,
        substitutePayload(args, parameters, parsedValue(message.value)),
      );
    };
    const name = `${instance.constructor.name}.${key}`;
    return [{ name, settings, patterns: handlerPatterns(method), call }];
  });
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

/** The value as JSON, or null (the wrapper decodes the bytes itself, and dead-letters a bad value). */
function parsedValue(value: Buffer | null): unknown {
  if (value === null) return null;
  try {
    return JSON.parse(value.toString('utf8')) as unknown;
  } catch {
    return null;
  }
}

/** The `KafkaContext` Nest's Kafka transport would build for `message` (no consumer, producer or heartbeat). */
function kafkaContextFor(message: InProcessMessage): KafkaContext {
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
