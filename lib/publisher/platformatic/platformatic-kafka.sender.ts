import type { Producer, ProducerOptions, SASLOptions, Serializer } from '@platformatic/kafka';
import { OutboxOptionsError } from '../../common/errors/outbox-options.error';
import { DEFAULT_CLIENT_ID, DEFAULT_RETRY } from '../kafka/kafka-publisher.options';
import type { KafkaConnectionOptions } from '../kafka/kafka-publisher.options';
import { throwIfSendAborted, unknownPartitionError } from '../kafka/kafka.sender';
import type { KafkaSender, TopicBatch } from '../kafka/kafka.sender';
import { loadPlatformaticKafka } from './platformatic-kafka.loader';
import type { PlatformaticKafka } from './platformatic-kafka.loader';
import { asKafkajsError } from './platformatic-kafka.errors';

type StringProducer = Producer<string, string, string, string>;
type StringProducerOptions = ProducerOptions<string, string, string, string>;

/** The publisher's options this sender reads (its `KafkaPublisherOptions` has more). */
export type PlatformaticKafkaSenderOptions = KafkaConnectionOptions & {
  allowAutoTopicCreation?: boolean;
};

/**
 * `KafkaSender` over `@platformatic/kafka` (`relay.kafka.client: 'platformatic'`): one producer,
 * `acks: -1`, string serializers; its errors in kafkajs' shape (`asKafkajsError`), so that
 * `classifyKafkaError` and the relay's simulation model classify both clients alike.
 */
export class PlatformaticKafkaSender implements KafkaSender {
  private readonly producerOptions: StringProducerOptions;
  private producer?: StringProducer;

  constructor(
    private readonly options: PlatformaticKafkaSenderOptions,
    private readonly kafka: PlatformaticKafka = loadPlatformaticKafka(),
  ) {
    const idempotent = options.idempotent ?? false;
    this.producerOptions = {
      clientId: options.clientId ?? DEFAULT_CLIENT_ID,
      bootstrapBrokers: options.brokers,
      connectTimeout: options.connectionTimeout,
      requestTimeout: options.requestTimeout,
      tls: tlsOf(options.ssl),
      sasl: saslOf(options.sasl),
      retries: options.retry?.retries ?? DEFAULT_RETRY.retries,
      retryDelay: options.retry?.initialRetryTime ?? DEFAULT_RETRY.initialRetryTime,
      autocreateTopics: options.allowAutoTopicCreation ?? false,
      acks: -1,
      idempotent,
      compression: options.compression === 'gzip' ? 'gzip' : 'none',
      serializers: {
        ...kafka.stringSerializers,
        headerKey: rememberingHeaderNames(kafka.stringSerializers.headerKey),
      },
    };
    for (const key of Object.keys(this.producerOptions) as (keyof StringProducerOptions)[]) {
      if (this.producerOptions[key] === undefined) delete this.producerOptions[key];
    }
  }

  async connect(): Promise<void> {
    const producer = this.ensureProducer();
    try {
      await producer.metadata({ topics: [] });
    } catch (error) {
      throw asKafkajsError(error);
    }
  }

  async partitionCount(topic: string): Promise<number> {
    let count: number;
    try {
      const metadata = await this.ensureProducer().metadata({
        topics: [topic],
        forceUpdate: true,
        autocreateTopics: false,
      });
      count = metadata.topics.get(topic)?.partitionsCount ?? 0;
    } catch (error) {
      throw asKafkajsError(error);
    }
    if (count === 0)
      throw unknownPartitionError(`topic "${topic}" has no partitions in the cluster metadata`);
    return count;
  }

  async send(batches: readonly TopicBatch[], signal?: AbortSignal): Promise<void> {
    throwIfSendAborted(signal);
    const producer = this.ensureProducer();
    const messages = [];
    for (const { topic, messages: list } of batches) {
      for (const { key, value, headers, partition } of list) {
        messages.push({ topic, key, value, headers, partition });
      }
    }
    try {
      await this.checkPartitions(producer, batches);
      // Its own retries of a request already sent (`retry`) cannot be stopped from here.
      throwIfSendAborted(signal);
      // `acks` per send: 1.35 does not read the producer's own and sends acks 1 without it.
      await producer.send({ acks: -1, messages });
    } catch (error) {
      throw asKafkajsError(error);
    }
  }

  async replaceProducer(): Promise<void> {}

  async disconnect(): Promise<void> {
    const producer = this.producer;
    this.producer = undefined;
    try {
      await producer?.close();
    } catch {
      // Never rejects: the connections close with the producer's sockets anyway.
    }
  }

  private ensureProducer(): StringProducer {
    this.producer ??= new this.kafka.Producer<string, string, string, string>(this.producerOptions);
    return this.producer;
  }

  /**
   * `@platformatic/kafka` sends a message for a partition its metadata does not know to that
   * partition modulo the topic's partition count. The publisher chose the partition itself (its
   * destination accounting depends on it): a partition the topic does not have is refused like
   * an unknown partition, before anything is sent, so the publisher reads the partitions again.
   */
  private async checkPartitions(
    producer: StringProducer,
    batches: readonly TopicBatch[],
  ): Promise<void> {
    const topics = batches.map((batch) => batch.topic);
    const metadata = await producer.metadata({ topics });
    for (const { topic, messages } of batches) {
      const count = metadata.topics.get(topic)?.partitionsCount ?? 0;
      for (const { partition } of messages) {
        if (partition === undefined || partition < count) continue;
        throw unknownPartitionError(
          `partition ${partition} of topic "${topic}" is not in the cluster metadata (${count} partitions): nothing was sent`,
        );
      }
    }
  }
}

function tlsOf(ssl: KafkaConnectionOptions['ssl']): StringProducerOptions['tls'] {
  if (!ssl) return undefined;
  return ssl === true ? {} : (ssl as StringProducerOptions['tls']);
}

const SASL_MECHANISMS: Record<string, SASLOptions['mechanism']> = {
  plain: 'PLAIN',
  'scram-sha-256': 'SCRAM-SHA-256',
  'scram-sha-512': 'SCRAM-SHA-512',
};

function saslOf(sasl: KafkaConnectionOptions['sasl']): SASLOptions | undefined {
  if (!sasl) return undefined;
  const mechanism = SASL_MECHANISMS[sasl.mechanism];
  if (!mechanism || !('username' in sasl)) {
    throw new OutboxOptionsError(
      'relay.kafka.sasl',
      `mechanism "${sasl.mechanism}" is not supported with relay.kafka.client "platformatic"`,
      'Use plain, scram-sha-256 or scram-sha-512 (with username and password), or relay.kafka.client: "kafkajs".',
    );
  }
  return { mechanism, username: sasl.username, password: sasl.password };
}

/** Names kept at most: the relay's are a handful; an application's own headers add a few. */
const MAX_NAMES = 256;

/**
 * `serializer` for header names, remembering what it made: every message carries the same
 * CloudEvents names, so each is encoded once rather than once per message (the same bytes; the
 * producer only copies them into its request). Past `MAX_NAMES` distinct names, the others are
 * encoded every time.
 */
function rememberingHeaderNames(serializer: Serializer<string>): Serializer<string> {
  const encoded = new Map<string, Buffer | undefined>();
  return (name) => {
    if (typeof name !== 'string') return serializer(name);
    let bytes = encoded.get(name);
    if (bytes === undefined) {
      bytes = serializer(name);
      if (encoded.size < MAX_NAMES) encoded.set(name, bytes);
    }
    return bytes;
  };
}
