import { OutboxError } from '../../common/errors/outbox.error';

/**
 * The broker refused a send for a reason of configuration, credentials or the client itself
 * (UNSUPPORTED_VERSION, SASL or ACL failures, a codec the client lacks...): nothing can be
 * published until someone changes it. A publisher reports it `retriable` with scope `broker`:
 * the relay pauses all publishing and retries with backoff, counting no attempt, and its log
 * line and health say `reason` ("configuration error: <error>") instead of "broker unavailable".
 */
export class PublisherConfigurationError extends OutboxError {
  /** "configuration error: <error>", e.g. `configuration error: UNSUPPORTED_VERSION`. */
  readonly reason: string;

  constructor(
    /** The Kafka error type, or the client error's name. */
    readonly failure: string,
    detail: string,
    context: { topic?: string; kafkaError?: string } = {},
  ) {
    super(`configuration error: ${failure}: ${detail}`, 'OUTBOX_PUBLISHER_CONFIGURATION', context);
    this.reason = `configuration error: ${failure}`;
  }
}
