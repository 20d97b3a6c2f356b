import { EMITS_EVENT_METADATA, TRANSACTIONAL_METADATA } from '../common/outbox.constants';
import {
  assertEmitsEventCompatible,
  ensureOutboxWrapper,
  methodLabel,
} from '../transaction/outbox-method.wrapper';
import type { TransactionalOptions } from '../transaction/transactional-options.interface';
import type { DeclaredEvent, EmitsEventOptions } from './emits-event.interface';
import { EVENT_NAME_PATTERN, EVENT_NAME_RULE } from './event.validator';
import { InvalidOutboxEventError } from './errors/invalid-outbox-event.error';
import { checkStaticSchedule } from './schedule/schedule.validator';

/**
 * Declares an event the method emits when it returns, in the same transaction as its writes.
 * `@EmitsEvent` IMPLIES `@Transactional()` (propagation Required: join or start); add
 * `@Transactional({...})` to choose Mandatory or transaction options. Repeatable: events are
 * emitted in the order the decorators are written. `aggregateId`, `payload`, `headers`,
 * `availableAt` and `delayMs` may be functions of `(result, ...args)`; fixed values are checked
 * when the class is defined.
 *
 * ```ts
 * @EmitsEvent('OrderCreated', {
 *   aggregateType: 'Order',
 *   aggregateId: (order: Order) => order.id,
 *   payload: (order: Order) => ({ total: order.total }),
 * })
 * async create(dto: CreateOrderDto): Promise<Order> { ... }
 *
 * @EmitsEvent('PaymentReminderDue', {
 *   aggregateType: 'Order',
 *   aggregateId: (order: Order) => order.id,
 *   payload: (order: Order) => ({ orderId: order.id }),
 *   delayMs: 24 * 60 * 60 * 1000, // published 24 h after the write (server clock)
 * })
 * ```
 */
export function EmitsEvent<R = any>(eventType: string, options: EmitsEventOptions<R>) {
  return <T extends (...args: any[]) => Promise<R>>(
    target: object,
    key: string | symbol,
    descriptor: TypedPropertyDescriptor<T>,
  ): void => {
    const label = methodLabel(target, key);
    checkStaticName(label, 'eventType', eventType);
    checkStaticName(label, 'aggregateType', options?.aggregateType);
    checkStaticSchedule(label, options);
    const wrapper = ensureOutboxWrapper(target, key, descriptor, '@EmitsEvent()');
    const transactional = Reflect.getOwnMetadata(TRANSACTIONAL_METADATA, wrapper) as
      TransactionalOptions | undefined;
    assertEmitsEventCompatible(transactional?.propagation, label);
    const declared = (Reflect.getOwnMetadata(EMITS_EVENT_METADATA, wrapper) ??
      []) as DeclaredEvent[];
    // Decorators run bottom-up: put this one first so events follow the written order.
    Reflect.defineMetadata(
      EMITS_EVENT_METADATA,
      [{ ...options, eventType } as DeclaredEvent, ...declared],
      wrapper,
    );
  };
}

function checkStaticName(label: string, field: string, value: unknown): void {
  if (typeof value !== 'string' || !EVENT_NAME_PATTERN.test(value)) {
    throw new InvalidOutboxEventError(
      field,
      `of @EmitsEvent on ${label} must be ${EVENT_NAME_RULE}, got ${JSON.stringify(value)}`,
      { method: label },
    );
  }
}
