import { KafkaParser } from '@nestjs/microservices';
import { keepRawMessage } from '../consumer/input/raw-kafka-message';

/**
 * Nest's `KafkaParser`, which also keeps the bytes received on the message it returns
 * (`rawMessageOf`). Nest's parser replaces a header value or a value whose text starts with `{`
 * or `[` by parsed JSON; `@IdempotentHandler` reads event ids and dead-letter copies from the
 * original bytes instead.
 */
export class RawKeepingKafkaParser extends KafkaParser {
  override parse<T = unknown>(data: any): T {
    const result = super.parse<T>(data);
    if (
      typeof result === 'object' &&
      result !== null &&
      typeof data === 'object' &&
      data !== null
    ) {
      keepRawMessage(result, {
        key: data.key ?? null,
        value: data.value ?? null,
        headers: { ...(data.headers ?? {}) },
      });
    }
    return result;
  }
}
