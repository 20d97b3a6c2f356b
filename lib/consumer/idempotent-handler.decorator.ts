import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { IDEMPOTENT_HANDLER_METADATA } from '../common/outbox.constants';
import { OutboxError } from '../common/errors/outbox.error';
import { copyMethodMetadata } from '../transaction/copy-method-metadata';
import { OutboxNotInitializedError } from '../transaction/errors/outbox-not-initialized.error';
import { findKafkaContext, toConsumedMessage } from './consumed-message';
import { IdempotentHandlerOptionsError } from './errors/idempotent-handler-options.error';
import { planArguments, substitutePayload } from './handler-arguments';
import { IdempotentHandlerHost } from './idempotent-handler.host';
import { resolveHandlerOptions, type IdempotentHandlerOptions } from './idempotent-handler.options';

/**
 * Applies each event once per consumer, atomically with the handler's own writes. Put it on an
 * `@EventPattern` handler of a Nest microservice served by the Kafka transport (either decorator
 * order works):
 *
 * ```ts
 * @EventPattern('orders.Order')
 * @IdempotentHandler({ validate: OrderPlaced })
 * async onOrder(@Payload() event: OrderPlaced, @Ctx() ctx: KafkaContext) { ... }
 * ```
 *
 * Per message: the value is decoded safely (see `decodePayload`) and replaces Nest's data argument
 * (the `@Payload()` parameters, or the first one); the event id comes from the `ce_id` header (or a
 * fallback). The handler runs in a transaction of `TransactionRunner` together with the insert of
 * `(consumer, eventId)`; `@Transactional` services and model calls inside join it.
 *
 * Returns the handler's value when it ran, and `undefined` (acknowledging the message) when the
 * event was already applied by this consumer, or when the message was dead-lettered (no or bad
 * event id, bad JSON, `__proto__`/`constructor`/`prototype` keys, rejected by `validate`, or
 * `maxFailures` reached). A failing handler throws `ConsumerRetryError`, a `KafkaRetriableException`,
 * so the transport delivers the message again.
 *
 * Pipes on `@Payload()` (and global ValidationPipes) see Nest's own, unchecked data before this
 * wrapper runs, and an error they throw is retried, not dead-lettered: use `validate` instead.
 */
export function IdempotentHandler(options?: IdempotentHandlerOptions): MethodDecorator {
  return (target, key, descriptor) => {
    const className = (target as { constructor: { name: string } }).constructor.name;
    const methodName = String(key);
    const settings = resolveHandlerOptions(className, methodName, options);
    const original = descriptor.value as unknown;
    if (typeof original !== 'function') {
      throw new IdempotentHandlerOptionsError(
        settings.handler,
        '(target)',
        'it is not a method',
        'Put @IdempotentHandler() on an @EventPattern handler method.',
      );
    }
    const plan = planArguments(
      Reflect.getMetadata(ROUTE_ARGS_METADATA, (target as object).constructor, key),
    );
    if (plan.declared && plan.contextIndex === undefined) {
      throw new IdempotentHandlerOptionsError(
        settings.handler,
        '(parameters)',
        'the method declares @Payload() but no @Ctx(), so the Kafka message (headers, raw value) never reaches it',
        'Add a `@Ctx() context: KafkaContext` parameter.',
      );
    }

    const wrapper = async function (this: unknown, ...args: unknown[]): Promise<unknown> {
      const runtime = IdempotentHandlerHost.resolve(settings.connectionName);
      if (!runtime)
        throw new OutboxNotInitializedError(
          `@IdempotentHandler ${settings.handler}`,
          settings.connectionName,
        );
      const context = findKafkaContext(args);
      if (!context) {
        throw new OutboxError(
          `@IdempotentHandler ${settings.handler} was called without a KafkaContext argument;` +
            ' it only serves @EventPattern handlers of the Kafka transport.',
          'OUTBOX_IDEMPOTENT_HANDLER_NO_CONTEXT',
          { handler: settings.handler },
        );
      }
      const outcome = await runtime.consume(
        toConsumedMessage(context),
        settings,
        (payload) =>
          (original as (...a: unknown[]) => unknown).apply(
            this,
            substitutePayload(args, plan, payload),
          ),
        context.getProducer?.(),
      );
      return outcome.kind === 'applied' ? outcome.result : undefined;
    };
    copyMethodMetadata(original, wrapper);
    Object.defineProperty(wrapper, 'name', { value: (original as { name: string }).name });
    Reflect.defineMetadata(IDEMPOTENT_HANDLER_METADATA, settings, wrapper);
    IdempotentHandlerHost.declare(settings.handler);
    descriptor.value = wrapper as typeof descriptor.value;
    return descriptor;
  };
}
