import { OutboxError } from '../common/errors/outbox.error';
import { EMITS_EVENT_METADATA, TRANSACTIONAL_METADATA } from '../common/outbox.constants';
import { copyMethodMetadata } from './copy-method-metadata';
import { OutboxNotInitializedError } from './errors/outbox-not-initialized.error';
import { TransactionPropagationError } from './errors/transaction-propagation.error';
import { Propagation } from './propagation';
import { OutboxRuntimeHost } from './transaction-runtime.host';
import type { TransactionalOptions } from './transactional-options.interface';

const ORIGINAL_METHOD = Symbol('outbox:original_method');

type AnyMethod = ((...args: any[]) => any) & { [ORIGINAL_METHOD]?: AnyMethod };

/** `Class.method`, for messages. */
export function methodLabel(target: object, key: string | symbol): string {
  const owner = typeof target === 'function' ? target.name : target.constructor?.name;
  return `${owner ?? '(anonymous)'}.${String(key)}`;
}

/**
 * Wraps the method of `descriptor` once (whichever of `@Transactional` / `@EmitsEvent` comes
 * first) and returns the wrapper. At each call the wrapper reads its `outbox:transactional` and
 * `outbox:emits_event` metadata, finds the running `OutboxModule` and runs the original method in
 * a transaction (propagation from `@Transactional`, else Required), emitting the declared events
 * after the body returned, still inside the transaction.
 * The wrapper keeps the method's name and every metadata entry of the original.
 */
export function ensureOutboxWrapper(
  target: object,
  key: string | symbol,
  descriptor: PropertyDescriptor,
  decorator: string,
): AnyMethod {
  const current = descriptor.value as AnyMethod | undefined;
  const label = methodLabel(target, key);
  if (typeof current !== 'function') {
    throw new OutboxError(
      `${decorator} can only decorate methods, but ${label} is not one (getters and fields are not supported).`,
      'OUTBOX_DECORATOR_MISUSE',
      { method: label, decorator },
    );
  }
  if (current[ORIGINAL_METHOD]) return current;

  const original = current;
  const wrapper: AnyMethod = async function (this: unknown, ...args: unknown[]) {
    const options = (Reflect.getOwnMetadata(TRANSACTIONAL_METADATA, wrapper) ??
      {}) as TransactionalOptions;
    const declared = (Reflect.getOwnMetadata(EMITS_EVENT_METADATA, wrapper) ?? []) as unknown[];
    const runtime = OutboxRuntimeHost.resolve(options.connectionName);
    if (!runtime) throw new OutboxNotInitializedError(label, options.connectionName);
    return runtime.runner.run(
      async () => {
        const result: unknown = await original.apply(this, args);
        if (declared.length > 0) runtime.emitDeclared(declared, result, args);
        return result;
      },
      options,
      label,
    );
  };
  Object.defineProperty(wrapper, 'name', { value: original.name, configurable: true });
  copyMethodMetadata(original, wrapper);
  wrapper[ORIGINAL_METHOD] = original;
  descriptor.value = wrapper;
  return wrapper;
}

/**
 * `@EmitsEvent` needs the events to commit with the data: refuse propagations that may run the
 * method without a transaction.
 */
export function assertEmitsEventCompatible(
  propagation: Propagation | undefined,
  label: string,
): void {
  if (propagation === Propagation.Never || propagation === Propagation.Supports) {
    throw new TransactionPropagationError(
      propagation,
      '@EmitsEvent needs a transaction, so the method may not run without one. Use Propagation.Required (the default) or Propagation.Mandatory',
      label,
    );
  }
}
