import type { ProducerOptions, RetryDelayGetter, SASLOptions } from '@platformatic/kafka';
import {
  assertKafkaClientHonours,
  DEFAULT_CONNECTION_TIMEOUT,
  DEFAULT_REQUEST_TIMEOUT,
  PRODUCE_TIMEOUT,
  resolvedRetry,
} from '../kafka/kafka-client.rules';
import type { ResolvedRetry } from '../kafka/kafka-client.rules';
import { DEFAULT_CLIENT_ID } from '../kafka/kafka-publisher.options';
import type { KafkaConnectionOptions } from '../kafka/kafka-publisher.options';

/** The publisher's options the platformatic sender reads (its `KafkaPublisherOptions` has more). */
export type PlatformaticKafkaSenderOptions = KafkaConnectionOptions & {
  allowAutoTopicCreation?: boolean;
};

type StringProducerOptions = ProducerOptions<string, string, string, string>;

/**
 * `@platformatic/kafka`'s producer options for `relay.kafka` (see `KAFKA_OPTION_RULES`), but its
 * serializers (the sender's): each option means what it means with kafkajs. Its own defaults
 * (connect timeout 5000, produce timeout 5000, 3 retries 1000 ms apart) are never used. Throws
 * `OutboxOptionsError` for an option it cannot honour.
 */
export function platformaticProducerOptions(
  options: PlatformaticKafkaSenderOptions,
  random: () => number = Math.random,
): StringProducerOptions {
  assertKafkaClientHonours(options, 'platformatic');
  const retry = resolvedRetry(options);
  const producer: StringProducerOptions = {
    clientId: options.clientId ?? DEFAULT_CLIENT_ID,
    bootstrapBrokers: options.brokers,
    connectTimeout: options.connectionTimeout ?? DEFAULT_CONNECTION_TIMEOUT,
    requestTimeout: options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT,
    timeout: PRODUCE_TIMEOUT,
    ...tlsOf(options.ssl),
    sasl: saslOf(options.sasl),
    retries: retry.retries,
    retryDelay: kafkajsRetryDelay(retry, random),
    autocreateTopics: options.allowAutoTopicCreation ?? false,
    acks: -1,
    idempotent: options.idempotent ?? false,
    compression: options.compression === 'gzip' ? 'gzip' : 'none',
  };
  for (const key of Object.keys(producer) as (keyof StringProducerOptions)[]) {
    if (producer[key] === undefined) delete producer[key];
  }
  return producer;
}

/**
 * kafkajs' retry schedule (`src/retry/index.js`) as platformatic's `retryDelay`: the first retry
 * after `initialRetryTime`, each next one `multiplier` times later, at most `maxRetryTime`, each
 * randomized by +-`factor`. `attempt` is 1 for the first retry.
 */
export function kafkajsRetryDelay(
  retry: ResolvedRetry,
  random: () => number = Math.random,
): RetryDelayGetter {
  return (_client, _operationId, attempt) => {
    const base = retry.initialRetryTime * retry.multiplier ** Math.max(0, attempt - 1);
    const delay = Math.ceil(base * (1 - retry.factor + 2 * retry.factor * random()));
    // kafkajs caps every retry but the first by maxRetryTime.
    return attempt <= 1 ? delay : Math.min(delay, retry.maxRetryTime);
  };
}

/**
 * kafkajs' `ssl` as `tls`; the SNI server name is the broker's host, as kafkajs sets it
 * (`src/network/socketFactory.js`), unless `ssl.servername` names one.
 */
function tlsOf(
  ssl: KafkaConnectionOptions['ssl'],
): Pick<StringProducerOptions, 'tls' | 'tlsServerName'> {
  if (!ssl) return {};
  const tls = (ssl === true ? {} : ssl) as NonNullable<StringProducerOptions['tls']>;
  return typeof tls.servername === 'string' ? { tls } : { tls, tlsServerName: true };
}

const SASL_MECHANISMS: Record<string, SASLOptions['mechanism']> = {
  plain: 'PLAIN',
  'scram-sha-256': 'SCRAM-SHA-256',
  'scram-sha-512': 'SCRAM-SHA-512',
};

/** kafkajs' `sasl` (plain or scram: the others are refused, see `KAFKA_OPTION_RULES`). */
function saslOf(sasl: KafkaConnectionOptions['sasl']): SASLOptions | undefined {
  if (!sasl || !('username' in sasl)) return undefined;
  return {
    mechanism: SASL_MECHANISMS[sasl.mechanism],
    username: sasl.username,
    password: sasl.password,
  };
}
