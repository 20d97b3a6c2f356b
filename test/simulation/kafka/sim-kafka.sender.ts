import { KAFKA_HEADERS } from '../../../lib/documents/outbox-event.envelope';
import { SendAbortedError } from '../../../lib/publisher/kafka/kafka.sender';
import type { KafkaSender, TopicBatch } from '../../../lib/publisher/kafka/kafka.sender';
import type { SimRandom } from '../core/sim.random';
import type { SimScheduler } from '../core/sim.scheduler';
import type { SimProcess } from '../process/sim-process';
import type { ActiveFaults } from '../schedule/active-faults';
import type { SendCallFact, SimHistory } from '../world/sim.history';
import { afterRetries, connectionError, errorType, partitionNotInMetadata } from './kafka-errors';
import { messageBytes } from './sim-kafka.cluster';
import type { SimKafkaCluster, SimProducerIdentity } from './sim-kafka.cluster';

/** Protocol errors the simulated broker returns for one partition (its leader, its replicas), not its topic. */
const PARTITION_ERRORS: ReadonlySet<string> = new Set([
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
  'NOT_ENOUGH_REPLICAS',
  'REQUEST_TIMED_OUT',
]);

/** kafkajs' `metadataMaxAge` default (`src/index.js`: DEFAULT_METADATA_MAX_AGE, 300,000 ms). */
export const METADATA_MAX_AGE_MS = 300_000;

/** Errors after which kafkajs refreshes its metadata before retrying (`src/producer/sendMessages.js` 150-161). */
const STALE_METADATA = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
]);

/**
 * One producer of the sender (`replaceProducer()` starts another): its metadata, and, when
 * idempotent, its producer id and sequences (`SimProducerIdentity`, taken from the cluster at
 * its first request) and the request it has in flight.
 */
class SimProducer {
  identity?: SimProducerIdentity;
  /** Partition count per topic as its metadata has it, and when that was read. */
  readonly metadata = new Map<string, number>();
  metadataExpiresAt = Number.NEGATIVE_INFINITY;
  /**
   * Idempotent: until when its last request is in flight (virtual ms). kafkajs holds a lock per
   * broker from before a request until its answer (`eosManager.acquireBrokerLock`,
   * sendMessages.js 79 and 122): no other request of the producer reaches the broker meanwhile.
   */
  busyUntil = Number.NEGATIVE_INFINITY;
}

/** Never settles: a call of a process that is dead (or died at this call). */
const NEVER = new Promise<never>(() => undefined);

/**
 * `KafkaSender` of one relay process over the simulated cluster, shaped like kafkajs with
 * `acks: -1`: each call reaches the broker after a network delay; a retriable error makes
 * kafkajs send the WHOLE request again (so partitions that had stored their messages store
 * them again), up to `retries` times, then the call rejects with
 * `KafkaJSNumberOfRetriesExceeded`; non-retriable errors reject at once. Partitions that
 * succeeded before a failure keep their messages (partial success).
 *
 * Its producer's metadata lags the cluster's: read when a topic is first sent to and when
 * `metadataMaxAge` (300 s) ran out (`cluster.refreshMetadataIfNecessary`, sendMessages.js 26), and
 * again after an attempt failed with a stale-metadata, connection or retriable protocol error
 * (sendMessages.js 150-161). A message for a partition it does not know is left out of the
 * request (kafkajs finds no leader for it, sendMessages.js 48) and, the rest answered, the call
 * rejects as `KafkajsSender.throwIfUnanswered` makes it (`partitionNotInMetadata`).
 *
 * `idempotent`: the producer has a producer id and per-partition sequences
 * (`SimProducerIdentity`), one request in flight at a time; a failed request leaves the
 * sequences where they were, though the broker may have appended it, so a later batch of
 * the same size at that partition is answered as a duplicate of it (nothing appended), and one of
 * another size is refused (OUT_OF_ORDER_SEQUENCE_NUMBER). `replaceProducer()` retires it: the
 * next send starts a new producer id, sequences from 0, with fresh metadata.
 */
export class SimKafkaSender implements KafkaSender {
  private producer = new SimProducer();

  constructor(
    private readonly scheduler: SimScheduler,
    private readonly cluster: SimKafkaCluster,
    private readonly history: SimHistory,
    private readonly faults: ActiveFaults,
    private readonly process: SimProcess,
    private readonly random: SimRandom,
    private readonly options: {
      latencyMs: number;
      retries: number;
      retryDelayMs: number;
      /** Whether the caller holds a valid lease now, by the server's clock. */
      holdsLease: () => boolean;
      /** `relay.kafka.idempotent`. */
      idempotent?: boolean;
      /** The producer metadata's maximum age (default `METADATA_MAX_AGE_MS`). */
      metadataMaxAgeMs?: number;
    },
  ) {}

  replaceProducer(): Promise<void> {
    this.retireProducer();
    return Promise.resolve();
  }

  /** The next send uses a new producer; the old one's calls in flight keep it (and its lock). */
  private retireProducer(): void {
    this.producer = new SimProducer();
    this.history.countEffect('producer replaced');
  }

  connect(): Promise<void> {
    return this.call('connect', () =>
      this.cluster.outage()
        ? { error: afterRetries(connectionError(false), this.options.retries) }
        : {},
    ).then(() => undefined);
  }

  partitionCount(topic: string): Promise<number> {
    return this.call('metadata', () => {
      const answer = this.cluster.metadata(topic);
      if ('partitions' in answer) return { value: answer.partitions };
      this.history.portFlow.push({
        kind: 'failed',
        at: this.scheduler.now,
        owner: `${this.process.name}#${this.process.incarnation}`,
        eventIds: [],
        refused: [topic],
      });
      return {
        error: answer.retriable ? afterRetries(answer.error, this.options.retries) : answer.error,
      };
    }) as Promise<number>;
  }

  send(batches: readonly TopicBatch[], signal?: AbortSignal): Promise<void> {
    // Like KafkajsSender: checked before the request; kafkajs' own retries of it go on.
    if (signal?.aborted) return Promise.reject(new SendAbortedError());
    const decision = this.process.portCall();
    if (!decision.proceed) return NEVER;
    const copy: TopicBatch[] = batches.map((batch) => ({
      topic: batch.topic,
      messages: batch.messages.map((message) => ({ ...message, headers: { ...message.headers } })),
    }));
    const fact: SendCallFact = {
      callId: this.history.sendCalls.length + 1,
      node: this.process.name,
      owner: `${this.process.name}#${this.process.incarnation}`,
      issuedAt: this.scheduler.now,
      eventIds: copy.flatMap((batch) =>
        batch.messages.map((message) => message.headers[KAFKA_HEADERS.id] ?? '?'),
      ),
      appended: [],
      unanswered: true,
      failedAttempts: 0,
      bytes: copy.reduce(
        (sum, batch) =>
          sum + batch.messages.reduce((size, message) => size + messageBytes(message), 0),
        0,
      ),
      issuedWithoutLease: !this.options.holdsLease(),
    };
    this.history.sendCalls.push(fact);
    const incarnation = this.process.incarnation;
    const producer = this.producer;
    const idempotent = this.options.idempotent === true;
    const promise = new Promise<void>((resolve, reject) => {
      const attempt = (number: number): void => {
        if (idempotent && this.scheduler.now < producer.busyUntil) {
          // Waits for the producer's request in flight, then travels to the broker.
          this.scheduler.after(
            producer.busyUntil - this.scheduler.now + this.latency(),
            'kafka',
            `produce#${fact.callId} after the producer's request in flight`,
            () => attempt(number),
          );
          return;
        }
        const { known, unknown } = this.splitByMetadata(producer, copy);
        if (idempotent)
          producer.identity ??= { id: this.cluster.initProducerId(), sequences: new Map() };
        const appendsBefore = this.history.appends.length;
        const attempted =
          known.length > 0
            ? this.cluster.produce(this.process.name, fact.callId, known, producer.identity)
            : { retriable: false };
        for (const append of this.history.appends.slice(appendsBefore))
          fact.appended.push(append.eventId);
        const missing = !attempted.error ? unknown : undefined;
        const result = missing
          ? { error: partitionNotInMetadata(missing.topic, missing.partition), retriable: false }
          : attempted;
        if (attempted.error && refreshesMetadata(attempted.error)) this.refreshMetadata(producer);
        if (result.error) fact.failedAttempts++;
        // Idempotent: the lock is held until the answer is back (a retry's: within the latency).
        if (idempotent) producer.busyUntil = this.scheduler.now + 2 * this.options.latencyMs;
        if (result.error && result.retriable && number < this.options.retries) {
          this.scheduler.after(
            this.options.retryDelayMs * 2 ** number + this.latency() * 2,
            'kafka',
            `produce#${fact.callId} retry ${number + 1}`,
            () => attempt(number + 1),
          );
          return;
        }
        const error = result.error
          ? result.retriable
            ? afterRetries(result.error, this.options.retries)
            : result.error
          : undefined;
        fact.error = error ? errorType(error) : undefined;
        const answerDelay = this.ackDelay();
        if (idempotent) producer.busyUntil = this.scheduler.now + answerDelay;
        this.answer(
          `produce#${fact.callId}`,
          answerDelay,
          () => {
            fact.unanswered = false;
            const at = this.scheduler.now;
            const { owner, eventIds } = fact;
            if (error) {
              const appended = new Set(fact.appended);
              // A partition's own error refuses that partition only (the others of its topic may take events).
              const byPartition = PARTITION_ERRORS.has(errorType(error));
              const refused = new Set<string>();
              for (const batch of copy)
                for (const message of batch.messages) {
                  if (appended.has(message.headers[KAFKA_HEADERS.id] ?? '?')) continue;
                  refused.add(
                    byPartition && message.partition !== undefined
                      ? `${batch.topic}#${message.partition}`
                      : batch.topic,
                  );
                }
              // The failing partition is refused even when its messages were appended (an
              // acknowledgement that timed out): the relay is told they failed, and holds it.
              const failed = result.failed;
              if (failed)
                refused.add(byPartition ? `${failed.topic}#${failed.partition}` : failed.topic);
              this.history.portFlow.push({
                kind: 'failed',
                at,
                owner,
                eventIds,
                refused: [...refused],
              });
            } else this.history.portFlow.push({ kind: 'published', at, owner, eventIds });
            if (error) reject(error);
            else resolve();
          },
          incarnation,
        );
      };
      this.scheduler.after(
        this.latency(),
        'kafka',
        `produce#${fact.callId} from ${fact.node}`,
        () => attempt(0),
      );
    });
    if (decision.crashAfter) this.process.crash('right after a Kafka send');
    return promise;
  }

  async disconnect(): Promise<void> {
    // Nothing to flush: every call already has its own answer on the way.
  }

  /**
   * The request as kafkajs builds it from its producer's metadata (read first if stale): the
   * messages for partitions it knows; `unknown`, the first message's partition it does not.
   */
  private splitByMetadata(
    producer: SimProducer,
    batches: readonly TopicBatch[],
  ): { known: TopicBatch[]; unknown?: { topic: string; partition: number } } {
    const now = this.scheduler.now;
    if (now > producer.metadataExpiresAt || batches.some((b) => !producer.metadata.has(b.topic)))
      this.refreshMetadata(producer, batches);
    let unknown: { topic: string; partition: number } | undefined;
    const known: TopicBatch[] = [];
    for (const batch of batches) {
      const count = producer.metadata.get(batch.topic);
      const messages =
        count === undefined
          ? batch.messages
          : batch.messages.filter((message) => {
              if (message.partition === undefined || message.partition < count) return true;
              unknown ??= { topic: batch.topic, partition: message.partition };
              return false;
            });
      if (messages.length === batch.messages.length) known.push(batch);
      else if (messages.length > 0) known.push({ topic: batch.topic, messages });
    }
    return { known, unknown };
  }

  /** Reads the cluster's partition counts into the producer's metadata (topics it knows, and `batches`'). */
  private refreshMetadata(producer: SimProducer, batches: readonly TopicBatch[] = []): void {
    for (const topic of new Set([...producer.metadata.keys(), ...batches.map((b) => b.topic)])) {
      const count = this.cluster.partitionsOf(topic);
      if (count === undefined) producer.metadata.delete(topic);
      else producer.metadata.set(topic, count);
    }
    producer.metadataExpiresAt =
      this.scheduler.now + (this.options.metadataMaxAgeMs ?? METADATA_MAX_AGE_MS);
  }

  /** A request/response that is not a produce (connect, metadata). */
  private call<T>(name: string, serve: () => { value?: T; error?: Error }): Promise<T | undefined> {
    const decision = this.process.portCall();
    if (!decision.proceed) return NEVER;
    const incarnation = this.process.incarnation;
    const promise = new Promise<T | undefined>((resolve, reject) => {
      this.scheduler.after(this.latency(), 'kafka', `${name} from ${this.process.name}`, () => {
        const answer = serve();
        this.answer(
          name,
          this.latency(),
          () => {
            if (answer.error) reject(answer.error);
            else resolve(answer.value);
          },
          incarnation,
        );
      });
    });
    if (decision.crashAfter) this.process.crash(`right after a Kafka ${name}`);
    return promise;
  }

  /** Delivers an answer to the incarnation that made the call (dropped if it crashed since). */
  private answer(label: string, delay: number, fn: () => void, incarnation: number): void {
    this.process.deliverAt(
      this.scheduler.now + delay,
      `kafka answer ${label}`,
      fn,
      undefined,
      incarnation,
    );
  }

  private latency(): number {
    return this.random.int(1, Math.max(1, this.options.latencyMs * 2));
  }

  private ackDelay(): number {
    const slow = this.faults.maxParam('slow-ack', this.scheduler.now);
    if (slow > 0) this.history.countEffect('slow-ack');
    return this.latency() + slow;
  }
}

/** Whether kafkajs refreshes its metadata after this error of an attempt (sendMessages.js 150-161). */
function refreshesMetadata(error: Error): boolean {
  const type = errorType(error);
  if (type === 'CONNECTION' || STALE_METADATA.has(type)) return true;
  return (error as { retriable?: unknown }).retriable === true;
}
