import type { DeadLetter, DeadLetterPublisher } from './idempotent-consume.flow';

/** Header names added to messages sent to the dead-letter topic. */
export const DEAD_LETTER_HEADERS = {
  consumer: 'x-outbox-dlq-consumer',
  reason: 'x-outbox-dlq-reason',
  detail: 'x-outbox-dlq-detail',
  source: 'x-outbox-dlq-source',
} as const;

const MAX_DETAIL = 1000;

/** The part of a kafkajs `Producer` we use (the transport's own, from `KafkaContext.getProducer()`). */
export interface ProducerLike {
  send(record: {
    topic: string;
    messages: Array<{ key: string | null; value: string | null; headers: Record<string, string> }>;
  }): Promise<unknown>;
}

export function isProducerLike(value: unknown): value is ProducerLike {
  return typeof (value as ProducerLike | null)?.send === 'function';
}

/**
 * Sends a dead letter to a Kafka topic: the original key, value and headers, plus headers naming
 * the consumer, the reason and the source `topic/partition/offset`.
 */
export class ProducerDeadLetterPublisher implements DeadLetterPublisher {
  constructor(private readonly producer: ProducerLike) {}

  async publish(topic: string, letter: DeadLetter): Promise<void> {
    const { message } = letter;
    await this.producer.send({
      topic,
      messages: [
        {
          key: message.key,
          value: letter.value,
          headers: {
            ...message.headers,
            [DEAD_LETTER_HEADERS.consumer]: letter.consumer,
            [DEAD_LETTER_HEADERS.reason]: letter.reason,
            [DEAD_LETTER_HEADERS.detail]: letter.detail.slice(0, MAX_DETAIL),
            [DEAD_LETTER_HEADERS.source]: `${message.topic}/${message.partition}/${message.offset}`,
          },
        },
      ],
    });
  }
}
