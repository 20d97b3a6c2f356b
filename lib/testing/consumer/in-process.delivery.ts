import { KafkaContext } from '@nestjs/microservices';
import type { OutboxEventRecord } from '../../common/envelope';
import { toKafkaMessage } from '../../publisher/kafka-message.mapper';
import type { EmittedEvent } from '../emitted-event';

/**
 * The Kafka message the relay would send for `event`, as the Kafka transport hands it to a
 * handler: the parsed value as data, and a `KafkaContext` whose message has the key, value and
 * headers (CloudEvents envelope and trace context) as Buffers, like kafkajs'.
 */
export function inProcessDelivery(
  event: EmittedEvent,
  topic: string,
  offset: number,
): { data: unknown; context: KafkaContext } {
  const message = toKafkaMessage(event as unknown as OutboxEventRecord);
  const headers: Record<string, Buffer> = {};
  for (const [name, value] of Object.entries(message.headers)) headers[name] = Buffer.from(value);
  const raw = {
    key: Buffer.from(message.key),
    value: Buffer.from(message.value),
    headers,
    offset: String(offset),
    timestamp: String(new Date(event.occurredAt).getTime()),
    attributes: 0,
    size: 0,
  };
  const args = [raw, 0, topic, undefined, async () => undefined, undefined];
  return {
    data: JSON.parse(message.value) as unknown,
    context: new KafkaContext(args as unknown as ConstructorParameters<typeof KafkaContext>[0]),
  };
}
