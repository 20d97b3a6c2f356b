import type { INestApplication } from '@nestjs/common';
import { OutboxKafkaServer } from 'nestjs-outbox';
import { type AppConfig, orderTopic } from './app.config.js';

/** The Kafka consumer side of the app: outbox events of the `Order` topic, dispatched by type. */
export function connectOrderEvents(app: INestApplication, config: AppConfig): void {
  app.connectMicroservice(
    {
      strategy: new OutboxKafkaServer({
        client: { clientId: 'shop-consumer', brokers: config.kafkaBrokers },
        consumer: { groupId: config.consumerGroup },
        subscribe: { fromBeginning: true },
        topics: [orderTopic(config)],
      }),
    },
    { inheritAppConfig: true },
  );
}
