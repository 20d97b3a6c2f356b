import { OutboxError } from '../common/errors/outbox.error';

/**
 * Thrown by `OutboxHealthIndicator.check()` when the outbox is unhealthy. It carries the result
 * in `causes` and `isHealthCheckError: true`, which is how `@nestjs/terminus` (10 and 11)
 * recognizes an indicator that is down, without this library importing terminus.
 */
export class OutboxHealthCheckError extends OutboxError {
  readonly isHealthCheckError = true;

  constructor(
    message: string,
    readonly causes: Record<string, Record<string, unknown> & { status: 'down' }>,
  ) {
    super(message, 'OUTBOX_UNHEALTHY', { problems: message });
  }
}
