import type { LoggerService } from '@nestjs/common';
import { PlatformaticKafkaSender } from '../platformatic/platformatic-kafka.sender';
import type { KafkaPublisherOptions } from './kafka-publisher.options';
import type { KafkaSender } from './kafka.sender';
import { KafkajsSender } from './kafkajs.sender';

/**
 * The sender of `relay.kafka.client`: kafkajs (the default) or `@platformatic/kafka`, loaded
 * only then (it throws `KafkaClientUnavailableError` when it cannot run here).
 */
export function createKafkaSender(
  options: KafkaPublisherOptions,
  logger: LoggerService,
): KafkaSender {
  return options.client === 'platformatic'
    ? new PlatformaticKafkaSender(options)
    : new KafkajsSender(options, logger);
}
