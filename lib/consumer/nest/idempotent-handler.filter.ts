import {
  Catch,
  type ArgumentsHost,
  type OnApplicationBootstrap,
  type RpcExceptionFilter,
  type Type,
} from '@nestjs/common';
import { from, type Observable } from 'rxjs';
import { IdempotentHandlerBootstrapError } from '../consumer.errors';
import { IdempotentHandlerBindings } from './idempotent-handler.bindings';
import { deliverFailure } from './idempotent-handler.delivery';
import type { IdempotentHandlerSettings } from '../idempotent-handler.options';

/**
 * The exception filter `@IdempotentHandler` binds to its method. Nest consults method filters
 * before controller and global ones, so every error of the method's pipeline (guards,
 * interceptors, pipes, the method) comes here first; no other filter can turn a failure into an
 * acknowledgement. Errors thrown before the method ran are counted (see `deliverFailure`).
 *
 * The returned observable emits once to acknowledge the message (Nest's `ServerKafka` awaits it
 * with `lastValueFrom`), or errors with a `ConsumerRetryError`, which rejects kafkajs'
 * `eachMessage`: the offset is not committed and the message is delivered again.
 */
abstract class IdempotentHandlerExceptionFilter
  implements RpcExceptionFilter, OnApplicationBootstrap
{
  protected abstract readonly settings: IdempotentHandlerSettings;

  catch(exception: unknown, host: ArgumentsHost): Observable<unknown> {
    return from(deliverFailure(this.settings, exception, host.getArgs()));
  }

  /**
   * Nest creates one instance in the module of the controller, even when the application has no
   * `OutboxModule` (then no explorer looks at the handler): fail the bootstrap here in that case.
   */
  onApplicationBootstrap(): void {
    if (IdempotentHandlerBindings.resolve(this.settings)) return;
    throw new IdempotentHandlerBootstrapError(
      this.settings.handler,
      'no-outbox-module',
      `no OutboxModule${this.settings.connectionName ? ` for connection '${this.settings.connectionName}'` : ''} is initialized in this application`,
      'Import OutboxModule.forRoot({ ... }) (or forRootAsync) in the application module.',
    );
  }
}

/**
 * A filter class for one decorated method (Nest instantiates filter classes itself, in the
 * controller's module, which gives them lifecycle hooks; the class carries the method's settings).
 */
export function idempotentHandlerFilter(
  settings: IdempotentHandlerSettings,
): Type<RpcExceptionFilter> {
  @Catch()
  class Filter extends IdempotentHandlerExceptionFilter {
    protected readonly settings = settings;
  }
  Object.defineProperty(Filter, 'name', { value: `IdempotentHandlerFilter(${settings.handler})` });
  return Filter;
}

/** Whether `filter` (an entry of a method's filter metadata) is one made by `idempotentHandlerFilter`. */
export function isIdempotentHandlerFilter(filter: unknown): boolean {
  return (
    typeof filter === 'function' && filter.prototype instanceof IdempotentHandlerExceptionFilter
  );
}
