import type { OutboxKafkaMessage } from '../kafka-message.mapper';

/**
 * A message bound for one partition. `KafkaPublisher` always sets it (Kafka's default partitioner
 * over the topic's partition count); without one, the client would pick its own.
 */
export interface PartitionedMessage extends OutboxKafkaMessage {
  partition?: number;
}

/** The client behind the relay's `KafkaSender` (`relay.kafka.client`). */
export type KafkaClientName = 'kafkajs' | 'platformatic';

/** Messages of one produce call, grouped by topic. */
export interface TopicBatch {
  topic: string;
  messages: PartitionedMessage[];
}

/**
 * The Kafka client behind `KafkaPublisher` (kafkajs in production, a simulated cluster in the
 * relay simulation). Errors are kafkajs-shaped: `name` (`KafkaJSProtocolError`,
 * `KafkaJSConnectionError`, `KafkaJSNumberOfRetriesExceeded`...), `type` for protocol errors
 * (`NOT_ENOUGH_REPLICAS`, `UNKNOWN_TOPIC_OR_PARTITION`...), wrapped in `originalError`/`cause`.
 */
export interface KafkaSender {
  connect(): Promise<void>;
  /**
   * Number of partitions of `topic` (from cluster metadata). Rejects for a topic the cluster does
   * not know; with `autoCreate`, the metadata request lets the broker create it (if the broker
   * allows it), and the count is that of the created topic.
   */
  partitionCount(topic: string, options?: PartitionCountOptions): Promise<number>;
  /**
   * Produces the messages with `acks: -1`; resolves when every partition acknowledged. On a
   * rejection some partitions may have stored their messages (the caller cannot tell which).
   * Once `signal` is aborted, sends nothing more (no retry): rejects with `SendAbortedError`.
   */
  send(batches: readonly TopicBatch[], signal?: AbortSignal): Promise<void>;
  /**
   * Retires the producer: the next send uses a new one (a new producer id, sequence numbers
   * from 0), and the old one is disconnected once its sends settled. Never rejects.
   */
  replaceProducer(): Promise<void>;
  /** Never rejects. */
  disconnect(): Promise<void>;
}

export interface PartitionCountOptions {
  /** Let the broker create the topic if it does not exist (`allowAutoTopicCreation`). */
  autoCreate?: boolean;
}

/** A send given up because the relay's term ended (`PublishContext.signal`). */
export class SendAbortedError extends Error {
  override readonly name = 'SendAbortedError';

  constructor() {
    super('not sent: the relay term that asked for it ended');
  }
}

export function throwIfSendAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new SendAbortedError();
}

/** A partition (or topic) the cluster metadata does not have, as kafkajs reports it. */
export function unknownPartitionError(message: string): Error {
  return Object.assign(new Error(message), {
    name: 'KafkaJSProtocolError',
    type: 'UNKNOWN_TOPIC_OR_PARTITION',
    retriable: true,
  });
}

/**
 * A partition the producer's own metadata does not have yet (the topic gained partitions since
 * the producer last read it): nothing was sent there. Retriable, and it concerns that partition
 * alone (the classifier reads `name`), not the topic: the topic's other partitions go on.
 */
export function partitionNotInMetadataError(topic: string, partition: number): Error {
  return Object.assign(
    new Error(
      `partition ${partition} of topic "${topic}" is not in the producer's metadata yet: nothing was sent there`,
    ),
    {
      name: 'OutboxPartitionNotInMetadata',
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
      retriable: true,
      partition,
    },
  );
}

/** Whether a send failed on a partition its producer's metadata lacks (`partitionNotInMetadataError`). */
export function isPartitionNotInMetadata(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'OutboxPartitionNotInMetadata';
}
