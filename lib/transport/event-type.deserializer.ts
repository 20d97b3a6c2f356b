import type { ConsumerDeserializer, IncomingEvent } from '@nestjs/microservices';
import { KAFKA_HEADERS } from '../documents/outbox-event.envelope';

/**
 * Routes a Kafka message to the `@EventPattern` of its event type (the `ce_type` header the relay
 * writes) instead of its topic name. Messages without that header keep the topic as pattern.
 */
export class EventTypeDeserializer implements ConsumerDeserializer {
  constructor(private readonly header: string = KAFKA_HEADERS.type) {}

  deserialize(
    message: { value?: unknown; headers?: Record<string, unknown> },
    options?: { channel?: string },
  ): IncomingEvent {
    const type = message?.headers?.[this.header];
    const pattern =
      typeof type === 'string' && type.length > 0
        ? type
        : Buffer.isBuffer(type) && type.length > 0
          ? type.toString()
          : options?.channel;
    return { pattern: pattern as string, data: message?.value ?? message };
  }
}
