import { EMITS_EVENT_METADATA, TRANSACTIONAL_METADATA } from '../common/outbox.constants';
import {
  assertEmitsEventCompatible,
  ensureOutboxWrapper,
  methodLabel,
} from './outbox-method.wrapper';
import type { TransactionalOptions } from './transactional-options.interface';

/**
 * Runs the method in a MongoDB transaction of the app's Mongoose connection (Mongoose models used
 * inside join it without passing a session). Works on any provider method, not only controllers.
 * By default (`Propagation.Required`) a call made inside a running transaction joins it.
 * The decorated method must return a Promise. Calling it before `OutboxModule` is initialized
 * throws `OutboxNotInitializedError`.
 */
export function Transactional(options: TransactionalOptions = {}) {
  return <T extends (...args: any[]) => Promise<unknown>>(
    target: object,
    key: string | symbol,
    descriptor: TypedPropertyDescriptor<T>,
  ): void => {
    const wrapper = ensureOutboxWrapper(target, key, descriptor, '@Transactional()');
    if (Reflect.getOwnMetadata(EMITS_EVENT_METADATA, wrapper)?.length > 0) {
      assertEmitsEventCompatible(options.propagation, methodLabel(target, key));
    }
    Reflect.defineMetadata(TRANSACTIONAL_METADATA, { ...options }, wrapper);
  };
}
