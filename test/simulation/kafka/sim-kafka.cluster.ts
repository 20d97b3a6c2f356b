import { Partitioners } from 'kafkajs';
import { KAFKA_HEADERS } from '../../../lib/documents/outbox-event.envelope';
import type { PartitionedMessage, TopicBatch } from '../../../lib/publisher/kafka/kafka.sender';
import type { SimRandom } from '../core/sim.random';
import type { SimScheduler } from '../core/sim.scheduler';
import type { ActiveFaults } from '../schedule/active-faults';
import type { Fault } from '../schedule/schedule.types';
import type { SimHistory } from '../world/sim.history';
import { connectionError, KAFKA_PROTOCOL, protocolError } from './kafka-errors';
import type { KafkaProtocolType } from './kafka-errors';

export interface SimTopic {
  name: string;
  /** Index of its aggregate type in the schedule (fault targets name it). */
  typeIndex: number;
  partitions: number;
}

/** What one produce attempt did at the broker. */
export interface ProduceAttempt {
  /** The error of the attempt (the first failing partition's, or the connection's). */
  error?: Error;
  retriable: boolean;
  /**
   * The partition whose append failed, when the error is one partition's: the relay is told it
   * failed even when its messages were appended (an acknowledgement that timed out).
   */
  failed?: { topic: string; partition: number };
}

/** Bytes of a message as the broker counts them (key, value, header names and values). */
export function messageBytes(message: PartitionedMessage): number {
  let bytes = message.key.length + message.value.length + 16;
  for (const [name, value] of Object.entries(message.headers)) bytes += name.length + value.length;
  return bytes;
}

/**
 * The Kafka cluster: topics with partitions, an append log per partition (recorded in the
 * history), and faults: whole-broker outages, topics unknown or unauthorized for a while,
 * partitions refusing (not enough replicas, leader moving), acks lost after the append
 * (REQUEST_TIMED_OUT), a "poison" event failing its whole partition batch (UNKNOWN_SERVER_ERROR,
 * an error the publisher counts against the events) for a while, and size limits (a partition's record batch over `messageMaxBytes`,
 * a request over `requestMaxBytes` closes the connection). One produce request applies
 * partition by partition: a failing partition does not undo the others.
 */
export class SimKafkaCluster {
  private readonly topics = new Map<string, SimTopic>();
  private readonly offsets = new Map<string, number>();
  /** Where kafkajs puts a message that names no partition (its default partitioner). */
  private readonly partitioner = Partitioners.DefaultPartitioner();

  constructor(
    private readonly scheduler: SimScheduler,
    private readonly history: SimHistory,
    private readonly faults: ActiveFaults,
    private readonly random: SimRandom,
    readonly limits: { messageMaxBytes: number; requestMaxBytes: number },
    topics: SimTopic[],
  ) {
    for (const topic of topics) this.topics.set(topic.name, topic);
  }

  outage(): boolean {
    const down = this.faults.any('broker-outage', this.scheduler.now);
    if (down) this.history.countEffect('broker-outage');
    return down;
  }

  /** Partition count of a topic, or the error metadata gives. */
  metadata(topic: string): { partitions: number } | { error: Error; retriable: boolean } {
    if (this.outage()) return { error: connectionError(false), retriable: true };
    const problem = this.topicProblem(topic);
    if (problem)
      return {
        error: protocolError(problem, topic),
        retriable: problem !== 'TOPIC_AUTHORIZATION_FAILED',
      };
    return { partitions: (this.topics.get(topic) as SimTopic).partitions };
  }

  /** One attempt of a produce request (kafkajs retries retriable ones: the caller calls again). */
  produce(node: string, callId: number, batches: readonly TopicBatch[]): ProduceAttempt {
    if (this.outage()) return { error: connectionError(false), retriable: true };
    let requestBytes = 0;
    for (const batch of batches)
      for (const message of batch.messages) requestBytes += messageBytes(message);
    if (requestBytes > this.limits.requestMaxBytes) {
      this.history.countEffect('request-too-large');
      return { error: connectionError(true), retriable: true };
    }
    if (requestBytes > 0.8 * this.limits.requestMaxBytes)
      this.history.countEffect('request over 80% of the broker limit');
    let first: ProduceAttempt | undefined;
    for (const batch of batches) {
      const groups = new Map<number, PartitionedMessage[]>();
      for (const message of batch.messages) {
        const partition = message.partition ?? this.defaultPartition(batch.topic, message);
        const group = groups.get(partition);
        if (group) group.push(message);
        else groups.set(partition, [message]);
      }
      for (const [partition, messages] of groups) {
        const failure = this.appendGroup(node, callId, batch.topic, partition, messages);
        if (failure && !first) first = failure;
      }
    }
    return first ?? { retriable: false };
  }

  private appendGroup(
    node: string,
    callId: number,
    topic: string,
    partition: number,
    messages: PartitionedMessage[],
  ): ProduceAttempt | undefined {
    const now = this.scheduler.now;
    const fail = (type: KafkaProtocolType, detail: string): ProduceAttempt => ({
      error: protocolError(type, `${topic}-${partition}: ${detail}`),
      retriable: KAFKA_PROTOCOL[type].retriable,
      failed: { topic, partition },
    });
    const problem = this.topicProblem(topic);
    if (problem) return fail(problem, 'topic refused');
    const spec = this.topics.get(topic) as SimTopic;
    if (!Number.isInteger(partition) || partition < 0 || partition >= spec.partitions) {
      this.history.contractViolations.push(
        `${now}: ${node} sent to ${topic} partition ${partition}; the topic has ${spec.partitions}`,
      );
      return fail('UNKNOWN_TOPIC_OR_PARTITION', 'no such partition');
    }
    const sizes = messages.map(messageBytes);
    if (sizes.some((size) => size > this.limits.messageMaxBytes)) {
      this.history.countEffect('kafka-oversize-event');
      return fail('MESSAGE_TOO_LARGE', 'a message exceeds message.max.bytes');
    }
    if (sizes.reduce((sum, size) => sum + size, 0) > this.limits.messageMaxBytes) {
      this.history.countEffect('record-batch-too-large');
      return fail(
        this.random.chance(0.5) ? 'RECORD_LIST_TOO_LARGE' : 'MESSAGE_TOO_LARGE',
        'the record batch exceeds message.max.bytes',
      );
    }
    const targets = (fault: Fault): boolean =>
      this.topicOf(fault.target)?.name === topic &&
      fault.param % Math.max(1, spec.partitions) === partition;
    const refused = this.faults.at('kafka-partition-retriable', now, targets)[0];
    if (refused) {
      this.history.countEffect('kafka-partition-retriable');
      const types: KafkaProtocolType[] = [
        'NOT_ENOUGH_REPLICAS',
        'LEADER_NOT_AVAILABLE',
        'NOT_LEADER_FOR_PARTITION',
      ];
      return fail(types[refused.duration % types.length], 'partition unavailable');
    }
    const poisoned = messages.some((message) => {
      const match = /"poison":"(\d+):(\d+)"/.exec(message.value);
      return (
        match !== null &&
        this.faults.any(
          'kafka-poison-event',
          now,
          (fault) => fault.target === Number(match[1]) && fault.param === Number(match[2]),
        )
      );
    });
    if (poisoned) {
      this.history.countEffect('kafka-poison-event');
      return fail('UNKNOWN_SERVER_ERROR', 'the broker fails on a message of this batch');
    }
    const ambiguous =
      this.faults.any('kafka-ambiguous-ack', now, targets) && this.random.chance(0.5);
    for (const message of messages) {
      const key = `${topic}/${partition}`;
      const offset = this.offsets.get(key) ?? 0;
      this.offsets.set(key, offset + 1);
      this.history.appends.push({
        eventId: message.headers[KAFKA_HEADERS.id] ?? `(no ce_id) ${message.key}`,
        topic,
        partition,
        offset,
        at: now,
        node,
        callId,
        ambiguous,
      });
    }
    if (ambiguous) {
      this.history.countEffect('kafka-ambiguous-ack');
      return fail('REQUEST_TIMED_OUT', 'appended, but the acknowledgement timed out');
    }
    return undefined;
  }

  /** The partition kafkajs' default partitioner gives a message with this key (an event's: its aggregate id). */
  partitionOfKey(topic: string, key: string): number {
    return this.defaultPartition(topic, { key, value: '' } as PartitionedMessage);
  }

  private defaultPartition(topic: string, message: PartitionedMessage): number {
    const count = this.topics.get(topic)?.partitions ?? 1;
    return this.partitioner({
      topic,
      partitionMetadata: Array.from({ length: count }, (_, partitionId) => ({
        partitionId,
        leader: 0,
        partitionErrorCode: 0,
        replicas: [],
        isr: [],
      })),
      message: { key: message.key, value: message.value },
    });
  }

  private topicProblem(topic: string): KafkaProtocolType | undefined {
    const spec = this.topics.get(topic);
    if (!spec) return 'UNKNOWN_TOPIC_OR_PARTITION';
    const now = this.scheduler.now;
    const forTopic = (fault: Fault): boolean => fault.target % this.topics.size === spec.typeIndex;
    if (this.faults.any('kafka-topic-missing', now, forTopic)) {
      this.history.countEffect('kafka-topic-missing');
      return 'UNKNOWN_TOPIC_OR_PARTITION';
    }
    if (this.faults.any('kafka-topic-unauthorized', now, forTopic)) {
      this.history.countEffect('kafka-topic-unauthorized');
      return 'TOPIC_AUTHORIZATION_FAILED';
    }
    return undefined;
  }

  /** The topic a fault targets (`target` is taken modulo the number of topics). */
  private topicOf(target: number): SimTopic | undefined {
    const typeIndex = target % this.topics.size;
    for (const topic of this.topics.values()) if (topic.typeIndex === typeIndex) return topic;
    return undefined;
  }
}
