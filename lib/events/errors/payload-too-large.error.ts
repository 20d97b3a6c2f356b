import { InvalidOutboxEventError } from './invalid-outbox-event.error';

/** The JSON encoding of the payload is larger than the `maxPayloadBytes` option. */
export class PayloadTooLargeError extends InvalidOutboxEventError {
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      'payload',
      `is ${bytes} bytes as JSON, above maxPayloadBytes (${limit}). Send a reference (an id or a URL)` +
        ' instead of the large data, or raise the OutboxModule option "maxPayloadBytes" (and Kafka\'s' +
        ' message.max.bytes with it)',
      { bytes, limit },
      'OUTBOX_PAYLOAD_TOO_LARGE',
    );
  }
}
