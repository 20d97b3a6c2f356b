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

/**
 * An idempotent producer as one produce attempt carries it: its producer id, and the client's
 * next sequence number per partition (`topic#partition`, absent: 0). The client assigns each
 * partition's batch the next sequence and moves it on by the batch's record count before the
 * request, and moves it back when the request fails, whatever the broker did (kafkajs
 * `src/producer/sendMessages.js` 86-89 and 105-111; `@platformatic/kafka`
 * `clients/producer/producer.js` moves it on only once the request succeeded, 712): the net
 * effect, which the attempt being atomic here lets the cluster apply, is that the sequences move
 * on only when the whole request succeeded.
 */
export interface SimProducerIdentity {
  id: number;
  sequences: Map<string, number>;
}

/** How many of a producer's last batches per partition the broker remembers (Kafka's `NUM_BATCHES_TO_RETAIN`). */
const RETAINED_BATCHES = 5;

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
  /** Per (producer id, topic, partition): the last batches appended, first sequence and count. */
  private readonly producerBatches = new Map<string, Array<{ first: number; count: number }>>();
  private lastProducerId = 0;

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

  /** Partition count as the cluster has it now, faults aside (what a client's metadata refresh reads). */
  partitionsOf(topic: string): number | undefined {
    return this.topics.get(topic)?.partitions;
  }

  /** Partitions added to a topic (an operator's `kafka-topics --alter --partitions`). */
  addPartitions(topic: string, added: number): void {
    const spec = this.topics.get(topic);
    if (!spec || added <= 0) return;
    spec.partitions += added;
    this.history.partitionsAdded.push({
      at: this.scheduler.now,
      topic,
      partitions: spec.partitions,
    });
    this.history.countEffect('kafka-partitions-added');
  }

  /** A new producer id (InitProducerId): its sequences start at 0 on every partition. */
  initProducerId(): number {
    return ++this.lastProducerId;
  }

  /**
   * One attempt of a produce request (kafkajs retries retriable ones: the caller calls again).
   * With `producer` (an idempotent producer), each partition's batch carries its first sequence
   * and the broker keeps, per producer and partition, its last batches: a batch equal to one of
   * them (same first sequence and record count) is a retry of it, answered as it was (success,
   * nothing appended again); a batch whose first sequence is not the one after the last batch
   * is refused with OUT_OF_ORDER_SEQUENCE_NUMBER (Kafka's `ProducerStateEntry` and
   * `ProducerAppendInfo.checkSequence`).
   */
  produce(
    node: string,
    callId: number,
    batches: readonly TopicBatch[],
    producer?: SimProducerIdentity,
  ): ProduceAttempt {
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
    const sent: Array<{ key: string; first: number; count: number }> = [];
    for (const batch of batches) {
      const groups = new Map<number, PartitionedMessage[]>();
      for (const message of batch.messages) {
        const partition = message.partition ?? this.defaultPartition(batch.topic, message);
        const group = groups.get(partition);
        if (group) group.push(message);
        else groups.set(partition, [message]);
      }
      for (const [partition, messages] of groups) {
        let sequence: { producerId: number; first: number } | undefined;
        if (producer) {
          const key = `${batch.topic}#${partition}`;
          sequence = { producerId: producer.id, first: producer.sequences.get(key) ?? 0 };
          sent.push({ key, first: sequence.first, count: messages.length });
        }
        const failure = this.appendGroup(node, callId, batch.topic, partition, messages, sequence);
        if (failure && !first) first = failure;
      }
    }
    // The client's sequences move on only when the whole request succeeded (see SimProducerIdentity).
    if (producer && !first)
      for (const { key, first: from, count } of sent) producer.sequences.set(key, from + count);
    return first ?? { retriable: false };
  }

  private appendGroup(
    node: string,
    callId: number,
    topic: string,
    partition: number,
    messages: PartitionedMessage[],
    sequence?: { producerId: number; first: number },
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
    if (sequence) {
      const state = `${sequence.producerId}/${topic}/${partition}`;
      const last = this.producerBatches.get(state) ?? [];
      const count = messages.length;
      if (last.some((batch) => batch.first === sequence.first && batch.count === count)) {
        // A retry of a batch it has: answered as that one was, nothing appended (with acks -1
        // the answer still waits for the replicas, so it may time out as the first did).
        this.history.countEffect('kafka-duplicate-batch');
        if (this.faults.any('kafka-ambiguous-ack', now, targets) && this.random.chance(0.5))
          return fail('REQUEST_TIMED_OUT', 'a duplicate batch, and the acknowledgement timed out');
        return undefined;
      }
      const previous = last[last.length - 1];
      const expected = previous ? previous.first + previous.count : 0;
      if (sequence.first !== expected) {
        this.history.countEffect('kafka-out-of-order-sequence');
        return fail(
          'OUT_OF_ORDER_SEQUENCE_NUMBER',
          `producer ${sequence.producerId}: expected sequence ${expected}, got ${sequence.first}`,
        );
      }
      last.push({ first: sequence.first, count });
      if (last.length > RETAINED_BATCHES) last.shift();
      this.producerBatches.set(state, last);
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
