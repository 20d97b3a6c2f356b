import type { KafkaContext } from '@nestjs/microservices';
import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { kafkaContextFor } from '../../operations/in-process/idempotent-handler.calls';
import { toKafkaMessage } from '../../publisher/kafka-message.mapper';
import type { EmittedEvent } from '../emitted-event';

/**
 * The Kafka message the relay would send for `event`, as the Kafka transport hands it to a
 * handler: the parsed value as data, and a `KafkaContext` with the key, value and headers
 * (CloudEvents envelope and trace context).
 */
export function inProcessDelivery(
  event: EmittedEvent,
  topic: string,
  offset: number,
): { data: unknown; context: KafkaContext } {
  const message = toKafkaMessage(event as unknown as OutboxEventRecord);
  return {
    data: JSON.parse(message.value) as unknown,
    context: kafkaContextFor({
      topic,
      partition: 0,
      offset: String(offset),
      key: message.key,
      value: Buffer.from(message.value),
      headers: message.headers,
      timestamp: String(new Date(event.occurredAt).getTime()),
    }),
  };
}
