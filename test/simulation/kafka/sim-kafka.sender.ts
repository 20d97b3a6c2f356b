import { KAFKA_HEADERS } from '../../../lib/documents/outbox-event.envelope';
import { SendAbortedError } from '../../../lib/publisher/kafka/kafka.sender';
import type { KafkaSender, TopicBatch } from '../../../lib/publisher/kafka/kafka.sender';
import type { SimRandom } from '../core/sim.random';
import type { SimScheduler } from '../core/sim.scheduler';
import type { SimProcess } from '../process/sim-process';
import type { ActiveFaults } from '../schedule/active-faults';
import type { SendCallFact, SimHistory } from '../world/sim.history';
import { afterRetries, connectionError, errorType } from './kafka-errors';
import { messageBytes } from './sim-kafka.cluster';
import type { SimKafkaCluster } from './sim-kafka.cluster';

/** Protocol errors the simulated broker returns for one partition (its leader, its replicas), not its topic. */
const PARTITION_ERRORS: ReadonlySet<string> = new Set([
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
  'NOT_ENOUGH_REPLICAS',
  'REQUEST_TIMED_OUT',
]);

/** Never settles: a call of a process that is dead (or died at this call). */
const NEVER = new Promise<never>(() => undefined);

/**
 * `KafkaSender` of one relay process over the simulated cluster, shaped like kafkajs with
 * `acks: -1`: each call reaches the broker after a network delay; a retriable error makes
 * kafkajs send the WHOLE request again (so partitions that had stored their messages store
 * them again), up to `retries` times, then the call rejects with
 * `KafkaJSNumberOfRetriesExceeded`; non-retriable errors reject at once. Partitions that
 * succeeded before a failure keep their messages (partial success).
 */
export class SimKafkaSender implements KafkaSender {
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
    },
  ) {}

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
    const promise = new Promise<void>((resolve, reject) => {
      const attempt = (number: number): void => {
        const appendsBefore = this.history.appends.length;
        const result = this.cluster.produce(this.process.name, fact.callId, copy);
        for (const append of this.history.appends.slice(appendsBefore))
          fact.appended.push(append.eventId);
        if (result.error) fact.failedAttempts++;
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
        this.answer(
          `produce#${fact.callId}`,
          this.ackDelay(),
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

  /** (h/simkafka models producer ids; until then no producer state to replace.) */
  async replaceProducer(): Promise<void> {}

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
