import { SetMetadata, UseFilters } from '@nestjs/common';
import {
  IDEMPOTENT_HANDLER_EXTRAS,
  IDEMPOTENT_HANDLER_METADATA,
} from '../../common/outbox.constants';
import { copyMethodMetadata } from '../../transaction/copy-method-metadata';
import { IdempotentHandlerOptionsError } from '../consumer.errors';
import { deliverToHandler } from './idempotent-handler.delivery';
import { idempotentHandlerFilter } from './idempotent-handler.filter';
import {
  resolveHandlerOptions,
  type IdempotentHandlerOptions,
} from '../idempotent-handler.options';
import { addPatternExtras, rpcParametersOf } from './nest-internals';

/**
 * Applies each event once per consumer, atomically with the handler's own writes. Put it on an
 * `@EventPattern` handler of a controller served by the Kafka transport, above any `@UseFilters`
 * of the method (`@EventPattern` may go anywhere):
 *
 * ```ts
 * @EventPattern('OrderPlaced')
 * @IdempotentHandler({ consumer: 'billing.orders', dto: OrderPlaced })
 * async onOrder(@Payload() event: OrderPlaced, @Ctx() ctx: KafkaContext) { ... }
 * ```
 *
 * Per message: the value is decoded safely (see `decodePayload`) and replaces Nest's data argument
 * (the `@Payload()` parameters, or the first one); the event id comes from the `ce_id` header (or a
 * fallback). The handler runs in a transaction together with the insert of `(consumer, eventId)`;
 * see `IdempotentHandlerScope` for what joins it. Every delivery ends: applied, skipped as a
 * duplicate, or dead-lettered (bad input at once; failures after `maxFailures` attempts, retried
 * in the same delivery; `UnrecoverableEventError` at once). Only when that cannot be decided now
 * (store unavailable, module not initialized, a guard or pipe rejected it) is the partition paused
 * and the message delivered again (`ConsumerRetryError`).
 *
 * The decorator also binds an exception filter to the method (consulted before any other), which
 * counts rejections by guards, pipes and interceptors that run before the method, and keeps
 * application filters from acknowledging a failed message. The `OutboxModule` finds the handler
 * at bootstrap and checks it (see `IdempotentHandlerBootstrapError`).
 */
export function IdempotentHandler(options?: IdempotentHandlerOptions): MethodDecorator {
  return (target, key, descriptor) => {
    const className = (target as { constructor: { name: string } }).constructor.name;
    const settings = resolveHandlerOptions(className, String(key), options);
    const original = descriptor.value as unknown;
    if (typeof original !== 'function') {
      throw new IdempotentHandlerOptionsError(
        settings.handler,
        '(target)',
        'it is not a method',
        'Put @IdempotentHandler() on an @EventPattern handler method.',
      );
    }
    const parameters = rpcParametersOf(target, key);
    if (parameters.declared && parameters.contextIndex === undefined) {
      throw new IdempotentHandlerOptionsError(
        settings.handler,
        '(parameters)',
        'the method declares @Payload() but no @Ctx(), so the Kafka message (headers, raw value) never reaches it',
        'Add a `@Ctx() context: KafkaContext` parameter.',
      );
    }
    const method = original as (...args: unknown[]) => unknown;
    const wrapper = async function (this: unknown, ...args: unknown[]): Promise<unknown> {
      return deliverToHandler(settings, parameters, method, this, args);
    };
    copyMethodMetadata(original, wrapper);
    addPatternExtras(wrapper, { [IDEMPOTENT_HANDLER_EXTRAS]: settings });
    Object.defineProperty(wrapper, 'name', { value: method.name });
    const wrapped = { ...descriptor, value: wrapper as typeof descriptor.value };
    SetMetadata(IDEMPOTENT_HANDLER_METADATA, settings)(target, key, wrapped);
    UseFilters(idempotentHandlerFilter(settings))(target, key, wrapped);
    return wrapped;
  };
}
