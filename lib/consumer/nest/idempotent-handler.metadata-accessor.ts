import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { IDEMPOTENT_HANDLER_METADATA } from '../../common/outbox.constants';
import type { IdempotentHandlerSettings } from '../idempotent-handler.options';
import { isIdempotentHandlerFilter } from './idempotent-handler.filter';
import { methodExceptionFilters } from './nest-internals';

/** Reads what `@IdempotentHandler` and `@UseFilters()` put on a method. */
@Injectable()
export class IdempotentHandlerMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  /** The settings of an `@IdempotentHandler` method, or undefined for any other method. */
  settingsOf(method: object): IdempotentHandlerSettings | undefined {
    if (typeof method !== 'function') return undefined;
    return this.reflector.get<IdempotentHandlerSettings | undefined>(
      IDEMPOTENT_HANDLER_METADATA,
      method as (...args: unknown[]) => unknown,
    );
  }

  /**
   * True when a filter bound with `@UseFilters` is consulted before the handler's own (Nest
   * consults a method's filters last-bound first, so the handler's must be the last one).
   */
  hasFilterBeforeOwn(method: object): boolean {
    const filters = methodExceptionFilters(method);
    const own = filters.findIndex(isIdempotentHandlerFilter);
    return own !== -1 && own !== filters.length - 1;
  }
}
