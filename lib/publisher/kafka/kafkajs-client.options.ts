import type { KafkaConfig } from 'kafkajs';
import {
  assertKafkaClientHonours,
  DEFAULT_CONNECTION_TIMEOUT,
  DEFAULT_REQUEST_TIMEOUT,
  resolvedRetry,
} from './kafka-client.rules';
import { DEFAULT_CLIENT_ID } from './kafka-publisher.options';
import type { KafkaConnectionOptions } from './kafka-publisher.options';

/**
 * kafkajs' `KafkaConfig` for `relay.kafka` (see `KAFKA_OPTION_RULES`; its logger is the
 * sender's): every timeout and retry field explicit, so that kafkajs' own defaults, which differ
 * from platformatic's and change under `NODE_ENV=test`, are never used. The produce request's
 * `timeout` is kafkajs' default, `PRODUCE_TIMEOUT`. Throws `OutboxOptionsError` for an option
 * kafkajs cannot honour.
 */
export function kafkajsClientConfig(
  options: KafkaConnectionOptions,
): Omit<KafkaConfig, 'logLevel' | 'logCreator'> {
  assertKafkaClientHonours(options, 'kafkajs');
  return {
    clientId: options.clientId ?? DEFAULT_CLIENT_ID,
    brokers: options.brokers,
    ssl: options.ssl,
    sasl: options.sasl,
    connectionTimeout: options.connectionTimeout ?? DEFAULT_CONNECTION_TIMEOUT,
    requestTimeout: options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT,
    retry: resolvedRetry(options),
  };
}
