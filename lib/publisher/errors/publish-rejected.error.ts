import { OutboxError } from '../../common/errors/outbox.error';

/**
 * The broker rejected an event. `fatal` ones (too large, unknown or invalid topic) go to the
 * dead-letter collection at once; the others are retried with backoff.
 */
export class PublishRejectedError extends OutboxError {
  constructor(
    message: string,
    readonly fatal: boolean,
    context: { topic?: string; eventId?: string; kafkaError?: string; reason?: string },
  ) {
    super(message, fatal ? 'OUTBOX_PUBLISH_REJECTED' : 'OUTBOX_PUBLISH_FAILED', context);
  }
}
