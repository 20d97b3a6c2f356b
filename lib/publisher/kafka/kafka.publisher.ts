import { Logger } from '@nestjs/common';
import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { asError } from '../../common/errors/describe-error';
import { groupBy } from '../../common/group-by';
import { toKafkaMessage } from '../kafka-message.mapper';
import type { OutboxKafkaMessage } from '../kafka-message.mapper';
import type {
  OutboxPublisher,
  PublishContext,
  PublishOutcome,
} from '../outbox-publisher.interface';
import { createTopicRouter } from '../topic-name';
import type { TopicRouter } from '../topic-name';
import { classifyKafkaError } from './kafka-error.classifier';
import type { KafkaErrorClass } from './kafka-error.classifier';
import { BrokerOutageLog } from './broker-outage.log';
import { instrumentKafkaSender } from './kafka-producer.telemetry';
import { idempotentSends } from './idempotent.sends';
import { partitionOfKey } from './key.partitioner';
import { SendAbortedError } from './kafka.sender';
import { isPartitionNotInMetadata } from './kafka.sender';
import type { KafkaSender, PartitionedMessage, TopicBatch } from './kafka.sender';
import { PartitionCounts } from './partition.counts';
import { KafkajsSender } from './kafkajs.sender';
import { PlatformaticKafkaSender } from '../platformatic/platformatic-kafka.sender';
import { failedSendOutcome } from './kafka-send.outcome';
import type { KafkaPublisherOptions } from './kafka-publisher.options';
import { PublishCall } from './publish.call';

export type { KafkaConnectionOptions, KafkaPublisherOptions } from './kafka-publisher.options';

/** An event ready to send, computed once per event object (size, routing, then publish). */
interface Prepared {
  topic: string;
  message: OutboxKafkaMessage;
  bytes: number;
  /** Its partition in a topic of `partitions` partitions, the last one computed. */
  partitions?: number;
  partition?: number;
  /** The message with `partition`, as last handed to the sender (never changed once made). */
  sent?: PartitionedMessage;
}

interface Entry {
  index: number;
  prepared: Prepared;
}

interface Group {
  topic: string;
  partition: number;
  entries: Entry[];
}

/** Bytes a record takes on the wire beyond its key, value and headers (lengths, offsets, CRC...). */
const RECORD_OVERHEAD = 70;

/**
 * The default publisher. Per event: topic from the router, key = aggregateId (so one aggregate
 * stays on one partition), CloudEvents headers, JSON value, `acks: -1`. It computes each
 * message's partition itself (kafkajs' default murmur2 partitioner over the topic's partition
 * count), so it knows where every event goes: `destinationsOf(event)` is `[topic, topic#p]`.
 *
 * One produce call per batch while all is well. When it fails, every (topic, partition) group
 * is sent on its own, concurrently, and each gets its own outcome: a partition that refuses is
 * held back alone (`destination` scope), an unknown or unauthorized topic alone, a connection
 * problem pauses everything (`broker`). Groups that the first call had stored are sent again
 * (duplicates, never losses). A size error splits its group message by message; only a message
 * that is too large on its own is `fatal`.
 */
export class KafkaPublisher implements OutboxPublisher {
  private readonly logger = new Logger('KafkaPublisher');
  private readonly route: TopicRouter;
  private readonly sender: KafkaSender;
  private readonly prepared = new WeakMap<OutboxEventRecord, Prepared | Error>();
  private readonly partitionCounts: PartitionCounts;
  private readonly outageLog: BrokerOutageLog;

  constructor(
    private readonly options: KafkaPublisherOptions,
    sender?: KafkaSender,
    private readonly now: () => number = Date.now,
  ) {
    this.route = createTopicRouter({ route: options.topic, prefix: options.topicPrefix });
    // Loads `@platformatic/kafka` only when chosen; `KafkaClientUnavailableError` if it cannot run.
    sender ??=
      options.client === 'platformatic'
        ? new PlatformaticKafkaSender(options)
        : new KafkajsSender(options, this.logger);
    const instrumented = instrumentKafkaSender(sender, now);
    this.sender = options.idempotent ? idempotentSends(instrumented) : instrumented;
    this.partitionCounts = new PartitionCounts(this.sender, now);
    this.outageLog = new BrokerOutageLog(this.logger, now, options.client);
  }

  connect(): Promise<void> {
    return this.sender.connect();
  }

  disconnect(): Promise<void> {
    return this.sender.disconnect();
  }

  sizeOf(event: OutboxEventRecord): number {
    const prepared = this.prepare(event);
    return prepared instanceof Error ? RECORD_OVERHEAD : prepared.bytes;
  }

  destinationsOf(event: OutboxEventRecord): readonly string[] {
    const prepared = this.prepare(event);
    if (prepared instanceof Error) return [];
    const count = this.partitionCounts.known(prepared.topic);
    if (count === undefined) return [prepared.topic];
    return [prepared.topic, `${prepared.topic}#${this.partitionOf(prepared, count)}`];
  }

  async publish(
    events: readonly OutboxEventRecord[],
    context: PublishContext = {},
  ): Promise<PublishOutcome[]> {
    const call = new PublishCall(context);
    const outcomes = new Array<PublishOutcome>(events.length);
    const ready: Entry[] = [];
    for (let index = 0; index < events.length; index++) {
      const prepared = this.prepare(events[index]);
      if (prepared instanceof Error) outcomes[index] = { status: 'fatal', error: prepared };
      else ready.push({ index, prepared });
    }
    const groups: Group[] = [];
    await Promise.all(
      [...groupBy(ready, (entry) => entry.prepared.topic)].map(async ([topic, entries]) => {
        const count = await this.countOrSettle(topic, entries, outcomes);
        if (count !== undefined) groups.push(...this.partitioned(topic, entries, count));
      }),
    );
    try {
      if (groups.length > 0) await this.sendGroups(groups, outcomes, call);
    } finally {
      call.end();
    }
    this.outageLog.observe(outcomes);
    // A sent event's message is not needed again: it is not kept while the caller holds the event.
    for (let i = 0; i < events.length; i++) {
      if (outcomes[i].status === 'ok') this.prepared.delete(events[i]);
    }
    return outcomes;
  }

  private prepare(event: OutboxEventRecord): Prepared | Error {
    let prepared = this.prepared.get(event);
    if (prepared === undefined) {
      try {
        const topic = this.route(event);
        const message = toKafkaMessage(event, this.options.source);
        prepared = { topic, message, bytes: wireBytes(message) };
      } catch (error) {
        prepared = asError(error);
      }
      this.prepared.set(event, prepared);
    }
    return prepared;
  }

  /** The partition of a keyed message (Kafka's default partitioner), computed once per count. */
  private partitionOf(prepared: Prepared, count: number): number {
    if (prepared.partitions !== count || prepared.partition === undefined) {
      prepared.partition = partitionOfKey(prepared.message.key, count);
      prepared.partitions = count;
    }
    return prepared.partition;
  }

  /**
   * The topic's partition count, or undefined once its events are settled. Every message is sent
   * to a partition computed here (`partitionOfKey`, as Kafka's Java client and kafkajs do): the
   * client is never left to pick one (platformatic's partitioner is not Kafka's, and the relay
   * keeps each aggregate on one partition). A topic the cluster does not know is asked for with
   * auto-creation when `allowAutoTopicCreation`; if it is still unknown, its events are held
   * (topic, retriable) until it exists.
   */
  private async countOrSettle(
    topic: string,
    entries: Entry[],
    outcomes: PublishOutcome[],
  ): Promise<number | undefined> {
    let error: unknown;
    try {
      return await this.partitionCounts.read(topic);
    } catch (caught) {
      error = caught;
    }
    let cls = classifyKafkaError(error);
    if (cls.scope === 'topic' && this.options.allowAutoTopicCreation) {
      try {
        return await this.partitionCounts.read(topic, { autoCreate: true });
      } catch (caught) {
        error = caught;
        cls = classifyKafkaError(caught);
        // Not created yet (the broker refused, or has no leader for it yet): held as a topic.
        if (cls.scope !== 'broker') cls = { scope: 'topic', type: cls.type };
      }
    }
    this.settle(outcomes, { topic, entries }, error, cls);
    return undefined;
  }

  private partitioned(topic: string, entries: Entry[], count: number): Group[] {
    const byPartition = groupBy(entries, (entry) => this.partitionOf(entry.prepared, count));
    return [...byPartition].map(([partition, list]) => ({ topic, partition, entries: list }));
  }

  /** The groups' messages by topic, in the groups' order (no list of all entries is built). */
  private batchOf(groups: readonly Group[]): TopicBatch[] {
    const byTopic = new Map<string, PartitionedMessage[]>();
    for (const { topic, partition, entries } of groups) {
      let messages = byTopic.get(topic);
      if (!messages) byTopic.set(topic, (messages = []));
      for (const entry of entries) messages.push(sentMessage(entry.prepared, partition));
    }
    return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
  }

  private async sendGroups(
    groups: Group[],
    outcomes: PublishOutcome[],
    call: PublishCall,
  ): Promise<void> {
    if (this.abandoned(groups, outcomes, call)) return;
    try {
      await this.sender.send(this.batchOf(groups), call.signal);
      for (const group of groups)
        for (const entry of group.entries) outcomes[entry.index] = { status: 'ok' };
      return;
    } catch (error) {
      if (isPartitionNotInMetadata(error)) await this.partitionCounts.producerLacks();
      if (this.abandoned(groups, outcomes, call)) return;
      const cls = classifyKafkaError(error);
      if (groups.length === 1) return this.failed(groups[0], error, cls, outcomes, call);
      if (cls.scope === 'broker' || cls.scope === 'configuration') {
        for (const group of groups) this.settle(outcomes, group, error, cls);
        return;
      }
    }
    // Some groups failed, maybe not all: each on its own, so each gets its own answer.
    await Promise.all(groups.map((group) => this.sendGroups([group], outcomes, call)));
  }

  /**
   * After the relay gave up on the call (`PublishContext.signal`), or may no longer send for it
   * (`PublishContext.mayStillSend`, read right before each send), nothing more is sent: the
   * groups' events are reported `retriable` (what an earlier send stored is a duplicate later).
   */
  private abandoned(
    groups: readonly Group[],
    outcomes: PublishOutcome[],
    call: PublishCall,
  ): boolean {
    if (!call.stopped()) return false;
    const error = new SendAbortedError();
    for (const group of groups)
      for (const entry of group.entries)
        outcomes[entry.index] = { status: 'retriable', error, scope: 'broker' };
    return true;
  }

  /**
   * An error about the records (too large, malformed, or one the broker cannot place) that
   * refused a whole group: its messages are sent one by one, in order, to find the guilty ones
   * (innocent ones count no attempt); after a failure, the rest of that aggregate is held back.
   */
  private async failed(
    group: Group,
    error: unknown,
    cls: KafkaErrorClass,
    outcomes: PublishOutcome[],
    call: PublishCall,
  ): Promise<void> {
    if ((cls.scope !== 'size' && cls.scope !== 'event') || group.entries.length < 2) {
      this.settle(outcomes, group, error, cls);
      return;
    }
    const held = new Map<string, PublishOutcome>();
    for (const entry of group.entries) {
      const aggregate = entry.prepared.message.key;
      const blocking = held.get(aggregate);
      if (blocking) outcomes[entry.index] = blocking;
      else {
        // One message: its failure is settled on it alone (`failed` does not split it again).
        await this.sendGroups([{ ...group, entries: [entry] }], outcomes, call);
        const outcome = outcomes[entry.index];
        if (outcome.status === 'retriable') held.set(aggregate, outcome);
      }
    }
  }

  private settle(
    outcomes: PublishOutcome[],
    group: { topic: string; partition?: number; entries: Entry[] },
    error: unknown,
    cls: KafkaErrorClass,
  ) {
    if (cls.scope === 'topic') this.partitionCounts.forget(group.topic);
    const outcome = failedSendOutcome(error, cls, group.topic, group.partition);
    for (const entry of group.entries) outcomes[entry.index] = outcome;
  }
}

/**
 * Bytes the message takes in a record batch: key, value, headers' names and values (UTF-8) and
 * `RECORD_OVERHEAD`. Exact for the strings, an upper bound for the record's framing.
 */
function wireBytes(message: OutboxKafkaMessage): number {
  let bytes = RECORD_OVERHEAD + Buffer.byteLength(message.key) + Buffer.byteLength(message.value);
  const headers = message.headers;
  for (const name in headers) bytes += Buffer.byteLength(name) + Buffer.byteLength(headers[name]);
  return bytes;
}

/** The event's message for `partition`, made once per (event, partition): a send never changes it. */
function sentMessage(prepared: Prepared, partition: number): PartitionedMessage {
  const sent = prepared.sent;
  if (sent !== undefined && sent.partition === partition) return sent;
  const { key, value, headers } = prepared.message;
  prepared.sent = { key, value, headers, partition };
  return prepared.sent;
}
