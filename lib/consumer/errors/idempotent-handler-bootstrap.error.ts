import { OutboxError } from '../../common/errors/outbox.error';

/** What is wrong with an `@IdempotentHandler` found at bootstrap. */
export type IdempotentHandlerProblem =
  | 'not-a-controller'
  | 'not-an-event-handler'
  | 'filter-order'
  | 'unknown-connection'
  | 'duplicate-consumer'
  | 'missing-unique-index'
  | 'no-outbox-module';

/**
 * An `@IdempotentHandler` cannot work as declared: thrown while the application initializes, so
 * it fails to start, naming the handler (`ClassName.methodName`), the problem and the fix.
 */
export class IdempotentHandlerBootstrapError extends OutboxError {
  constructor(
    readonly handler: string,
    readonly problem: IdempotentHandlerProblem,
    detail: string,
    fix: string,
  ) {
    super(
      `@IdempotentHandler on ${handler}: ${detail}. ${fix}`,
      'OUTBOX_IDEMPOTENT_HANDLER_BOOTSTRAP',
      {
        handler,
        problem,
      },
    );
  }
}
