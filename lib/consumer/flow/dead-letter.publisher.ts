import type { DeadLetter, DeadLetterPublisher } from '../consume.ports';
import { deadLetterCopy } from '../input/dead-letter.copy';

/** Header names added to messages sent to the dead-letter topic. */
export const DEAD_LETTER_HEADERS = {
  consumer: 'x-outbox-dlq-consumer',
  reason: 'x-outbox-dlq-reason',
  /** The last error (at most 1000 characters). */
  detail: 'x-outbox-dlq-detail',
  /** `topic/partition/offset` of the original message. */
  source: 'x-outbox-dlq-source',
  /** Size in bytes and SHA-256 of the whole original value; `truncated` is `true` when the value sent is only its start. */
  valueBytes: 'x-outbox-dlq-value-bytes',
  valueSha256: 'x-outbox-dlq-value-sha256',
  truncated: 'x-outbox-dlq-truncated',
} as const;

const MAX_DETAIL = 1000;

/** The part of a kafkajs `Producer` we use (the transport's own, from `KafkaContext.getProducer()`). */
export interface ProducerLike {
  send(record: {
    topic: string;
    messages: Array<{
      key: string | null;
      value: Buffer | string | null;
      headers: Record<string, string>;
    }>;
  }): Promise<unknown>;
}

export function isProducerLike(value: unknown): value is ProducerLike {
  return typeof (value as ProducerLike | null)?.send === 'function';
}

/**
 * Sends a dead letter to a Kafka topic: the original key and headers, the value (truncated like the
 * stored copy, so it fits the topic), and headers naming the consumer, the reason, the error and the
 * source `topic/partition/offset`.
 */
export class ProducerDeadLetterPublisher implements DeadLetterPublisher {
  constructor(
    private readonly producer: ProducerLike,
    private readonly maxValueBytes: number,
  ) {}

  async publish(topic: string, letter: DeadLetter): Promise<void> {
    const { message } = letter;
    const copy = deadLetterCopy(message, this.maxValueBytes);
    const headers: Record<string, string> = {};
    for (const { key, value } of copy.headers) headers[key] = value;
    Object.assign(headers, {
      [DEAD_LETTER_HEADERS.consumer]: letter.consumer,
      [DEAD_LETTER_HEADERS.reason]: letter.reason,
      [DEAD_LETTER_HEADERS.detail]: letter.lastError.slice(0, MAX_DETAIL),
      [DEAD_LETTER_HEADERS.source]: `${message.topic}/${message.partition}/${message.offset}`,
      [DEAD_LETTER_HEADERS.valueBytes]: String(copy.valueBytes),
      [DEAD_LETTER_HEADERS.truncated]: String(copy.valueTruncated),
    });
    if (copy.valueSha256) headers[DEAD_LETTER_HEADERS.valueSha256] = copy.valueSha256;
    const value =
      copy.value === null
        ? null
        : Buffer.from(copy.value, copy.valueEncoding === 'base64' ? 'base64' : 'utf8');
    await this.producer.send({ topic, messages: [{ key: copy.key, value, headers }] });
  }
}
