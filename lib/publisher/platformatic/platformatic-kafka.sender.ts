import type { Producer, ProducerOptions, Serializer } from '@platformatic/kafka';
import { DEFAULT_SEND_TIMEOUT } from '../kafka/kafka-publisher.options';
import {
  partitionNotInMetadataError,
  throwIfSendAborted,
  unknownPartitionError,
} from '../kafka/kafka.sender';
import type { KafkaSender, PartitionCountOptions, TopicBatch } from '../kafka/kafka.sender';
import { ProducerSlot } from '../kafka/producer.slot';
import { withSendDeadline } from '../kafka/send.deadline';
import { loadPlatformaticKafka } from './platformatic-kafka.loader';
import type { PlatformaticKafka } from './platformatic-kafka.loader';
import { asKafkajsError } from './platformatic-kafka.errors';
import { platformaticProducerOptions } from './platformatic-producer.options';
import type { PlatformaticKafkaSenderOptions } from './platformatic-producer.options';

type StringProducer = Producer<string, string, string, string>;
type StringProducerOptions = ProducerOptions<string, string, string, string>;

export type { PlatformaticKafkaSenderOptions };

/**
 * `KafkaSender` over `@platformatic/kafka` (`relay.kafka.client: 'platformatic'`): one producer,
 * `acks: -1`, string serializers; its errors in kafkajs' shape (`asKafkajsError`), so that
 * `classifyKafkaError` and the relay's simulation model classify both clients alike. Every send
 * has a deadline (`sendTimeout`): with `idempotent` the client retries a send for ever.
 */
export class PlatformaticKafkaSender implements KafkaSender {
  private readonly producerOptions: StringProducerOptions;
  private readonly sendTimeout: number;
  private readonly slot: ProducerSlot<StringProducer>;

  constructor(
    private readonly options: PlatformaticKafkaSenderOptions,
    private readonly kafka: PlatformaticKafka = loadPlatformaticKafka(),
  ) {
    this.producerOptions = {
      ...platformaticProducerOptions(options),
      serializers: {
        ...kafka.stringSerializers,
        headerKey: rememberingHeaderNames(kafka.stringSerializers.headerKey),
      },
    };
    this.sendTimeout = options.sendTimeout ?? DEFAULT_SEND_TIMEOUT;
    this.slot = new ProducerSlot(
      // The client changes the options it is given (idempotent raises `retries`): a copy each.
      () => new this.kafka.Producer<string, string, string, string>({ ...this.producerOptions }),
      closeProducer,
      this.sendTimeout,
    );
  }

  async connect(): Promise<void> {
    const producer = this.slot.producer();
    try {
      await withSendDeadline(producer.metadata({ topics: [] }), this.sendTimeout);
    } catch (error) {
      throw asKafkajsError(error);
    }
  }

  /** Read through the producer, `forceUpdate`: its own metadata learns the count too. */
  async partitionCount(topic: string, options?: PartitionCountOptions): Promise<number> {
    let count: number;
    try {
      const request = this.slot.producer().metadata({
        topics: [topic],
        forceUpdate: true,
        autocreateTopics: options?.autoCreate ?? false,
      });
      const metadata = await withSendDeadline(request, this.sendTimeout);
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
    return withSendDeadline(
      this.slot.run((producer) => this.sendWith(producer, batches, signal)),
      this.sendTimeout,
    );
  }

  private async sendWith(
    producer: StringProducer,
    batches: readonly TopicBatch[],
    signal: AbortSignal | undefined,
  ): Promise<void> {
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

  async replaceProducer(): Promise<void> {
    this.slot.retire();
  }

  /** Never rejects: the connections close with the producer's sockets anyway. */
  disconnect(): Promise<void> {
    return this.slot.closeAll();
  }

  /**
   * `@platformatic/kafka` sends a message for a partition its metadata does not know to that
   * partition modulo the topic's partition count. The publisher chose the partition itself (its
   * destination accounting depends on it): a partition beyond the producer's cached count
   * (`metadataMaxAge`) has the topic's metadata read again; one the topic still does not have
   * is refused before anything is sent (`OutboxPartitionNotInMetadata`: only that partition
   * waits), as the kafkajs sender does.
   */
  private async checkPartitions(
    producer: StringProducer,
    batches: readonly TopicBatch[],
  ): Promise<void> {
    const topics = batches.map((batch) => batch.topic);
    let metadata = await producer.metadata({ topics });
    let refreshed = false;
    for (const { topic, messages } of batches) {
      for (const { partition } of messages) {
        if (partition === undefined) continue;
        if (partition < (metadata.topics.get(topic)?.partitionsCount ?? 0)) continue;
        if (!refreshed) {
          metadata = await producer.metadata({ topics, forceUpdate: true });
          refreshed = true;
          if (partition < (metadata.topics.get(topic)?.partitionsCount ?? 0)) continue;
        }
        throw partitionNotInMetadataError(topic, partition);
      }
    }
  }
}

/** Closes `producer`; `force`: without waiting for its requests in flight. Never rejects. */
function closeProducer(producer: StringProducer, force: boolean): Promise<void> {
  const close: (force?: boolean) => Promise<void> = producer.close.bind(producer);
  return close(force).catch(() => undefined);
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
