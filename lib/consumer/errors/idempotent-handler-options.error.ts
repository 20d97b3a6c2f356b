import { OutboxError } from '../../common/errors/outbox.error';

/**
 * `@IdempotentHandler(...)` was given bad options, or put on a method it cannot serve.
 * Thrown when the class is defined (decoration time), so the app fails to start.
 */
export class IdempotentHandlerOptionsError extends OutboxError {
  constructor(
    readonly handler: string,
    readonly option: string,
    problem: string,
    fix: string,
  ) {
    super(
      `@IdempotentHandler on ${handler}: invalid "${option}": ${problem}. ${fix}`,
      'OUTBOX_IDEMPOTENT_HANDLER_OPTIONS',
      { handler, option },
    );
  }
}
