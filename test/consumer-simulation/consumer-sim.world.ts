import { AsyncLocalStorage } from 'node:async_hooks';
import type { ClientSession, mongo } from 'mongoose';
import { describeError } from '../../lib/common/errors/describe-error';
import type { ConsumedMessage } from '../../lib/consumer/input/consumed-message';
import type {
  ConsumeOutcome,
  ConsumerTransactionRunner,
  DeadLetter,
} from '../../lib/consumer/consume.ports';
import type { DeadLetterReason } from '../../lib/documents/consumer-dead-letter.document';
import {
  MongoConsumerFailureStore,
  restartFailureCount,
} from '../../lib/consumer/stores/consumer-failure.store';
import { OutboxConsumerMetrics } from '../../lib/consumer/flow/consumer.metrics';
import { ConsumerSink } from '../../lib/consumer/flow/consumer-sink';
import { UnrecoverableEventError } from '../../lib/consumer/consumer.errors';
import { currentHandlerScope } from '../../lib/consumer/flow/handler-scope';
import { applyBatch } from '../../lib/consumer/batch/batch-apply.flow';
import { consumeInBatch } from '../../lib/consumer/batch/batch-consume.flow';
import { currentBatch } from '../../lib/consumer/batch/consume-batch.scope';
import {
  consumeIdempotently,
  consumeRejected,
  RedeliveryRequired,
  type ConsumeDeps,
  type ConsumeSettings,
  type Delivery,
} from '../../lib/consumer/flow/idempotent-consume.flow';
import type { ClassValidation } from '../../lib/consumer/input/payload.validator';
import { MongoProcessedEventStore } from '../../lib/consumer/stores/processed-event.store';
import type { ConsumerDeadLetterDocument } from '../../lib/documents/consumer-dead-letter.document';
import type { ProcessedEventDocument } from '../../lib/documents/processed-event.document';
import type { Behaviour, FaultKind, Scenario, SimEventSpec } from './consumer-sim.scenario';
import { expectedEnding } from './consumer-sim.scenario';
import { SimCollection, SimSession, type Doc } from './sim-collection';

/** Real milliseconds a handler may run before it times out. */
export const HANDLER_TIMEOUT_MS = 4;
/** Real milliseconds a whole batch may run (a loaded machine must not fail every batch). */
const BATCH_BUDGET_MS = 40;
const TOPIC = 'Order';
const CONSUMER = 'billing';
/** A run that needs more deliveries than this is reported as never ending. */
const MAX_DELIVERIES = 4000;

/** What a message became at the end of one delivery, or why it did not end. */
type Ending = ConsumeOutcome['kind'];

interface SimMessage {
  key: string;
  event: SimEventSpec & { index: number };
  message: ConsumedMessage;
  /** Deliveries since its last ending (or rewind) that ended unacknowledged while no fault fired. */
  unendedWithoutFault: number;
  /** The most of those before one ending. */
  mostUnendedWithoutFault: number;
  endings: Ending[];
}

interface Partition {
  index: number;
  log: SimMessage[];
  position: number;
  committed: number;
  sinceCommit: number;
  pausedUntil: number;
}

/** The transaction runner: one `SimSession` per `run`, in AsyncLocalStorage like Mongoose's. */
class SimRunner implements ConsumerTransactionRunner {
  private readonly sessions = new AsyncLocalStorage<SimSession>();

  constructor(private readonly world: ConsumerWorld) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    // Inside a running transaction (a batch's), join it, as TransactionRunner does.
    const running = this.sessions.getStore();
    if (running && !running.ended) return fn();
    const session = new SimSession();
    try {
      const result = await this.sessions.run(session, fn);
      this.world.commit(session);
      return result;
    } finally {
      session.ended = true;
    }
  }

  currentSession(): ClientSession | undefined {
    return this.sessions.getStore() as unknown as ClientSession | undefined;
  }

  session(): SimSession | undefined {
    return this.sessions.getStore();
  }
}

const mongoNetworkError = (what: string) =>
  Object.assign(new Error(`connection to 127.0.0.1:27017 closed (${what})`), {
    name: 'MongoNetworkError',
  });

/**
 * One consumer (`billing`) reading the partitions of one topic through the real consume flow
 * (`consumeIdempotently` / `consumeRejected`, `runAttempt`, `ConsumerSink`,
 * `MongoProcessedEventStore`, `MongoConsumerFailureStore`), with simulated ports: collections in
 * memory, transactions that commit staged writes, a clock moved by the flow's sleeps and the
 * partitions' pauses, a dead-letter topic producer, and faults fired at scheduled deliveries.
 * The transport is modelled as kafkajs runs `eachMessage`: a partition's messages one at a time,
 * the next one only after the current one ended; an unacknowledged one is delivered again after
 * its pause; a rebalance or a restart goes back to the last committed offset.
 */
export class ConsumerWorld {
  clock = 0;
  faultsFired = 0;
  readonly metrics = new OutboxConsumerMetrics();
  readonly processed: SimCollection;
  readonly deadLetters: SimCollection;
  /** The handler's own writes (one document per application), committed with its transaction. */
  readonly applied: SimCollection;
  readonly topicCopies: DeadLetter[] = [];
  /** Errors other than `RedeliveryRequired` that escaped the flow (the runtime's guard catches them). */
  readonly escaped: string[] = [];
  /** Writes a timed-out handler made after it woke up, and whether they were refused. */
  readonly lateWrites: Array<'refused' | 'landed'> = [];
  readonly partitions: Partition[];
  readonly messages: SimMessage[] = [];
  readonly tally: Record<Ending, number> = { applied: 0, duplicate: 0, 'dead-lettered': 0 };
  /** How each event ended first, by event index. */
  readonly firstEnding = new Map<number, { kind: Ending; reason?: DeadLetterReason }>();
  /** Handler behaviour after requeue (set by `requeue`), by event id: failures left before it works. */
  private readonly requeueFailures = new Map<string, number>();
  private readonly late: Array<Promise<unknown>> = [];
  private readonly runner = new SimRunner(this);
  private readonly sink: ConsumerSink;
  private readonly deps: ConsumeDeps;
  private readonly settings: ConsumeSettings;
  private readonly faults = {
    storeDown: 0,
    processedDown: 0,
    commitFails: 0,
    commitAmbiguous: 0,
    handlerDbDown: 0,
    heartbeatFails: 0,
    topicDown: 0,
    topicGone: false,
    crashInBatch: 0,
    crashAfterCommit: 0,
  };
  /** Batches committed, and batches that fell back to one event at a time. */
  readonly batches = { committed: 0, fellBack: 0, crashed: 0 };
  private rebalanced = false;
  private random: () => number;

  constructor(private readonly scenario: Scenario) {
    this.random = mulberry32(scenario.seed);
    this.faults.crashInBatch = scenario.batchCrashes.inBatch;
    this.faults.crashAfterCommit = scenario.batchCrashes.afterCommit;
    const fault = (collection: string, operation: string) => this.maybeFail(collection, operation);
    this.processed = new SimCollection(
      'outbox_processed_events',
      [{ fields: ['consumer', 'eventId'] }],
      fault,
    );
    this.deadLetters = new SimCollection(
      'outbox_consumer_dead_letters',
      [{ fields: ['consumer', 'eventId'], partial: { eventId: { $type: 'string' } } }],
      fault,
    );
    this.applied = new SimCollection('orders', [], () => undefined);
    const logger = { debug: () => {}, log: () => {}, warn: () => {}, error: () => {} };
    this.sink = new ConsumerSink(
      new MongoConsumerFailureStore(
        this.deadLetters as unknown as mongo.Collection<ConsumerDeadLetterDocument>,
        { errorHistoryLimit: 5, failingRetentionSeconds: 3600, maxValueBytes: 10_000 },
      ),
      logger,
      () => this.clock,
    );
    this.settings = {
      handler: 'Billing.onOrder',
      consumer: CONSUMER,
      maxFailures: scenario.maxFailures,
      retryBackoff: { initialMs: 10, maxMs: 40 },
      handlerTimeoutMs: HANDLER_TIMEOUT_MS,
      eventIdHeader: 'ce_id',
      ...(scenario.deadLetterTopic ? { deadLetterTopic: `${TOPIC}.dlq` } : {}),
      dto: class OrderPayload {},
      validate: (payload) => {
        if (payload.check === 'reject') return false;
        if (payload.check === 'throw') throw new Error('validate threw on purpose');
        return true;
      },
    };
    this.deps = {
      runner: this.runner,
      processed: new MongoProcessedEventStore(
        this.processed as unknown as mongo.Collection<ProcessedEventDocument>,
        () => this.runner.currentSession(),
      ),
      sink: this.sink,
      metrics: this.metrics,
      logger,
      publisher: {
        publish: async (_topic, letter) => {
          if (this.faults.topicGone) throw new Error('UNKNOWN_TOPIC_OR_PARTITION');
          if (this.faults.topicDown > 0) {
            this.faults.topicDown--;
            this.faultsFired++;
            throw new Error('KafkaJSConnectionError: broker down');
          }
          this.topicCopies.push(letter);
        },
      },
      sleep: async (ms) => {
        this.clock += ms;
      },
      classValidation: fakeClassValidation,
    };
    this.partitions = Array.from({ length: scenario.partitions }, (_, index) => ({
      index,
      log: [],
      position: 0,
      committed: 0,
      sinceCommit: 0,
      pausedUntil: 0,
    }));
    scenario.events.forEach((spec, index) => {
      const event = { ...spec, index };
      this.append(event);
      if (spec.duplicated) this.append(event); // the relay published it twice
    });
  }

  /** Delivers until every partition is consumed; then waits for timed-out handlers to wake up. */
  async run(): Promise<void> {
    let deliveries = 0;
    for (;;) {
      const live = this.partitions.filter((p) => p.position < p.log.length);
      if (live.length === 0) break;
      if (++deliveries > MAX_DELIVERIES) {
        throw new Error(
          `messages still not ended after ${MAX_DELIVERIES} deliveries: ${live
            .map((p) => describeMessage(p.log[p.position]))
            .join('; ')}`,
        );
      }
      this.fireFaults(deliveries);
      const ready = live.filter((p) => p.pausedUntil <= this.clock);
      if (ready.length === 0) {
        this.clock = Math.min(...live.map((p) => p.pausedUntil));
        continue;
      }
      const partition = ready[Math.floor(this.random() * ready.length)];
      if (this.scenario.batchMaxEvents > 1) await this.deliverBatch(partition);
      else await this.deliver(partition);
    }
    await Promise.all(this.late);
  }

  /**
   * An operator requeues every dead letter of a failing handler, as the operations service does: in
   * Kafka order (topic, partition, offset as a number), each through a new delivery of its kept
   * message, after the handler was fixed to fail `maxFailures - 1` times and then work.
   * Returns each requeued event's ending.
   */
  async requeue(): Promise<Array<{ eventId: string; ending: Ending | 'not ended' }>> {
    // The operator requeues once the outage is over (the dead-letter topic may stay gone).
    Object.assign(this.faults, {
      storeDown: 0,
      processedDown: 0,
      commitFails: 0,
      commitAmbiguous: 0,
      handlerDbDown: 0,
      heartbeatFails: 0,
      topicDown: 0,
    });
    const letters = this.deadLetters.docs
      .filter(
        (d) =>
          d.status === 'dead' &&
          typeof d.eventId === 'string' &&
          (d.reason === 'max-failures' || d.reason === 'unrecoverable'),
      )
      .sort(
        (a, b) => Number(a.partition) - Number(b.partition) || Number(a.offset) - Number(b.offset),
      );
    const results: Array<{ eventId: string; ending: Ending | 'not ended' }> = [];
    for (const letter of letters) {
      const eventId = letter.eventId as string;
      const kept = this.messages.find(
        (m) => m.message.partition === letter.partition && m.message.offset === letter.offset,
      )!;
      this.requeueFailures.set(eventId, this.scenario.maxFailures - 1);
      // As OutboxConsumerDeadLetters.requeueMany does: a requeue is a new start.
      await restartFailureCount(
        this.deadLetters as unknown as mongo.Collection<ConsumerDeadLetterDocument>,
        CONSUMER,
        eventId,
      );
      let ending: Ending | 'not ended' = 'not ended';
      // Requeue calls the method directly: no pipe runs; a delivery that does not end is tried
      // again (a bounded number of times: each is a redelivery the property bounds).
      for (let tries = 0; tries <= this.scenario.maxFailures && ending === 'not ended'; tries++) {
        try {
          ending = (
            await consumeIdempotently(this.delivery(kept), this.settings, this.handler, this.deps)
          ).kind;
        } catch (error) {
          if (!(error instanceof RedeliveryRequired)) throw error;
        }
      }
      results.push({ eventId, ending });
    }
    await Promise.all(this.late);
    return results;
  }

  /** Applies a committed session's writes; a commit fault may refuse it or leave it ambiguous. */
  commit(session: SimSession): void {
    if (this.faults.commitFails > 0) {
      this.faults.commitFails--;
      this.faultsFired++;
      throw Object.assign(new Error('commit failed: no primary'), {
        errorLabels: ['TransientTransactionError'],
      });
    }
    for (const { collection, doc } of session.staged) collection.commitStaged(doc);
    if (this.faults.commitAmbiguous > 0) {
      this.faults.commitAmbiguous--;
      this.faultsFired++;
      throw mongoNetworkError('commit sent, reply lost');
    }
  }

  expected(event: SimEventSpec): ReturnType<typeof expectedEnding> {
    return expectedEnding(event, this.scenario.maxFailures);
  }

  private readonly handler = async (): Promise<unknown> => {
    const { eventId } = currentHandlerScope();
    const session = this.runner.session()!;
    if (this.faults.handlerDbDown > 0) {
      this.faults.handlerDbDown--;
      this.faultsFired++;
      throw mongoNetworkError('handler write');
    }
    const behaviour = this.behaviourOf(eventId);
    const write = () => session.stage(this.applied, { eventId, at: this.clock });
    switch (behaviour) {
      case 'ok':
        write();
        return 'applied';
      case 'throw':
        write(); // aborted with the transaction
        throw new Error(`handler of ${eventId} fails`);
      case 'unrecoverable':
        throw new UnrecoverableEventError(`${eventId} can never be applied`);
      case 'hang': {
        // Never returns by itself; once the flow gives the attempt up (its signal aborts), it
        // wakes up and tries to write: that write must be refused.
        const { signal } = currentHandlerScope();
        return new Promise((resolve, reject) => {
          this.late.push(
            new Promise<void>((done) =>
              signal.addEventListener(
                'abort',
                () =>
                  setImmediate(() => {
                    try {
                      write();
                      this.lateWrites.push('landed');
                      resolve('late');
                    } catch (error) {
                      this.lateWrites.push('refused');
                      reject(error as Error);
                    }
                    done();
                  }),
                { once: true },
              ),
            ),
          );
        });
      }
      case 'reject':
        throw new Error(`behaviour 'reject' reached the handler of ${eventId}`);
    }
  };

  /**
   * What the handler (or the pipe in front of it) does now: by the failures the store counted
   * for the event (as a user's flaky dependency would behave on its nth try). An event that
   * already ended dead-lettered keeps failing the way it died; a requeued one fails
   * `maxFailures - 1` times, then works.
   */
  private behaviourOf(eventId: string): Behaviour {
    const left = this.requeueFailures.get(eventId);
    if (left !== undefined) {
      if (left === 0) return 'ok';
      this.requeueFailures.set(eventId, left - 1);
      return 'throw';
    }
    const message = this.messages.find((m) => m.message.headers.ce_id === eventId)!;
    const { event } = message;
    const ended = this.firstEnding.get(event.index);
    const expected = this.expected(event);
    if (ended?.kind === 'dead-lettered' && expected.kind === 'dead-lettered')
      return expected.behaviour;
    const doc = this.deadLetters.docs.find((d) => d.consumer === CONSUMER && d.eventId === eventId);
    const counted = (doc?.attempts as number | undefined) ?? 0;
    return event.script[Math.min(counted, event.script.length - 1)];
  }

  /**
   * What `OutboxKafkaServer` does with a kafkajs fetch (`consumeFetchedBatch`): the next
   * `batchMaxEvents` messages of the partition in one transaction (`applyBatch`), each through
   * `consumeInBatch` (a pipe's rejection fails the batch, as the runtime's `consumeRejected`
   * does inside one); committed, their offsets follow; not, the same messages one at a time
   * (`deliver`), stopping at the first that does not end. A crash inside the batch or between its
   * commit and its offsets restarts the consumer; a failed heartbeat inside it is a rebalance.
   */
  private async deliverBatch(partition: Partition): Promise<void> {
    const run = partition.log.slice(
      partition.position,
      partition.position + this.scenario.batchMaxEvents,
    );
    if (run.length < 2) return this.deliver(partition);
    this.rebalanced = false;
    let crashed = false;
    const ids = run.map((sim) => sim.message.headers.ce_id);
    const result = await applyBatch(CONSUMER, BATCH_BUDGET_MS, this.deps, ids, async () => {
      const batch = currentBatch()!;
      for (const sim of run) {
        const delivery = this.delivery(sim);
        if (this.behaviourAtDeliveryStart(sim) === 'reject') {
          throw batch.fail('rejected by a pipe', new Error('rejected by a pipe'));
        }
        await consumeInBatch(delivery, this.settings, this.handler, this.deps, batch).catch(
          () => undefined, // Nest's pipeline may swallow it: the batch keeps its failure
        );
        if (batch.failed) return;
        if (this.faults.crashInBatch > 0 && this.random() < 0.5) {
          this.faults.crashInBatch--;
          this.faultsFired++;
          crashed = true;
          throw new Error('the process died inside the batch');
        }
        await delivery.heartbeat(); // a rebalance (its failure) aborts the batch
      }
    });
    if (crashed) {
      this.batches.crashed++;
      this.partitions.forEach((p) => this.rewind(p));
      return;
    }
    if (result.committed) {
      this.batches.committed++;
      for (const sim of run) this.ended(sim, { kind: 'applied', result: 'applied' });
      if (this.faults.crashAfterCommit > 0) {
        this.faults.crashAfterCommit--;
        this.faultsFired++;
        this.batches.crashed++;
        this.partitions.forEach((p) => this.rewind(p));
        return;
      }
      partition.position += run.length;
      partition.sinceCommit += run.length;
      if (partition.sinceCommit >= this.scenario.commitEvery) {
        partition.committed = partition.position;
        partition.sinceCommit = 0;
      }
      return;
    }
    if (this.rebalanced) {
      this.rewind(partition);
      return;
    }
    this.batches.fellBack++;
    for (let i = 0; i < run.length; i++) {
      const before = partition.position;
      await this.deliver(partition);
      if (partition.position !== before + 1) return; // not ended: fetched again later
    }
  }

  private async deliver(partition: Partition): Promise<void> {
    const sim = partition.log[partition.position];
    const faultsBefore = this.faultsFired;
    this.rebalanced = false;
    const delivery = this.delivery(sim);
    try {
      const outcome =
        this.behaviourAtDeliveryStart(sim) === 'reject'
          ? await consumeRejected(
              delivery,
              this.settings,
              new Error('rejected by a pipe'),
              this.deps,
            )
          : await consumeIdempotently(delivery, this.settings, this.handler, this.deps);
      this.ended(sim, outcome);
      partition.position++;
      if (++partition.sinceCommit >= this.scenario.commitEvery) {
        partition.committed = partition.position;
        partition.sinceCommit = 0;
      }
    } catch (error) {
      // What the runtime's guard does: a RedeliveryRequired pauses for its delay; anything else
      // is unexpected, logged, and paused for the store's delay.
      let pauseMs: number | undefined;
      if (error instanceof RedeliveryRequired) pauseMs = error.pauseMs;
      else {
        this.escaped.push(`${describeMessage(sim)}: ${describeError(error)}`);
        pauseMs = this.sink.retryDelayMs();
      }
      if (this.faultsFired === faultsBefore) {
        sim.unendedWithoutFault++;
        sim.mostUnendedWithoutFault = Math.max(
          sim.mostUnendedWithoutFault,
          sim.unendedWithoutFault,
        );
      }
      if (pauseMs !== undefined) partition.pausedUntil = this.clock + pauseMs;
      if (this.rebalanced) this.rewind(partition);
    }
  }

  /**
   * A pipe rejects at the start of a delivery when the event's next counted try is a rejection,
   * until the event was applied (a pipe that let it through once lets its redeliveries through).
   */
  private behaviourAtDeliveryStart(sim: SimMessage): Behaviour | undefined {
    const eventId = sim.message.headers.ce_id;
    if (eventId === undefined || sim.event.input !== 'ok') return undefined;
    if (this.requeueFailures.has(eventId)) return undefined;
    if (this.applied.docs.some((d) => d.eventId === eventId)) return undefined;
    return this.behaviourOf(eventId);
  }

  private ended(sim: SimMessage, outcome: ConsumeOutcome): void {
    sim.endings.push(outcome.kind);
    sim.unendedWithoutFault = 0;
    this.tally[outcome.kind]++;
    if (!this.firstEnding.has(sim.event.index)) {
      this.firstEnding.set(sim.event.index, {
        kind: outcome.kind,
        ...(outcome.kind === 'dead-lettered' ? { reason: outcome.reason } : {}),
      });
    }
  }

  private delivery(sim: SimMessage): Delivery {
    return {
      message: sim.message,
      heartbeat: async () => {
        if (this.faults.heartbeatFails > 0) {
          this.faults.heartbeatFails--;
          this.faultsFired++;
          this.rebalanced = true;
          throw new Error('REBALANCE_IN_PROGRESS');
        }
      },
    };
  }

  /** Back to the committed offset (a rebalance, a restart): each message starts a new pass. */
  private rewind(partition: Partition): void {
    partition.position = partition.committed;
    partition.sinceCommit = 0;
    for (const sim of partition.log) sim.unendedWithoutFault = 0;
  }

  private fireFaults(delivery: number): void {
    for (const fault of this.scenario.faults) {
      if (fault.atDelivery === delivery) this.fire(fault.kind, fault.count);
    }
  }

  private fire(kind: FaultKind, count: number): void {
    switch (kind) {
      case 'store-down':
        this.faults.storeDown += count;
        break;
      case 'processed-down':
        this.faults.processedDown += count;
        break;
      case 'commit-fails':
        this.faults.commitFails += count;
        break;
      case 'commit-ambiguous':
        this.faults.commitAmbiguous += count;
        break;
      case 'handler-db-down':
        this.faults.handlerDbDown += count;
        break;
      case 'heartbeat-fails':
        this.faults.heartbeatFails += count;
        break;
      case 'topic-down':
        this.faults.topicDown += count;
        break;
      case 'topic-gone':
        this.faults.topicGone = true;
        break;
      case 'crash-in-batch':
        this.faults.crashInBatch += Math.min(count, 3);
        break;
      case 'crash-after-commit':
        this.faults.crashAfterCommit += Math.min(count, 3);
        break;
      case 'restart':
        // The consumer restarts: every partition goes back to its committed offset.
        this.faultsFired++;
        this.partitions.forEach((p) => this.rewind(p));
        break;
    }
  }

  private maybeFail(collection: string, operation: string): void {
    if (collection === this.deadLetters?.collectionName && this.faults.storeDown > 0) {
      this.faults.storeDown--;
      this.faultsFired++;
      throw mongoNetworkError(`${collection}.${operation}`);
    }
    if (collection === this.processed?.collectionName && this.faults.processedDown > 0) {
      this.faults.processedDown--;
      this.faultsFired++;
      throw mongoNetworkError(`${collection}.${operation}`);
    }
  }

  private append(event: SimEventSpec & { index: number }): void {
    const partition = this.partitions[event.aggregate % this.partitions.length];
    const offset = String(partition.log.length);
    const headers: Record<string, string> = Object.create(null);
    if (event.input !== 'no-id') headers.ce_id = `evt-${event.index}`;
    const payload: Doc = { aggregate: event.aggregate };
    if (event.input === 'dto-invalid') payload.dto = 'invalid';
    if (event.input === 'dto-throws-in-transform') payload.dto = 'throws-in-transform';
    if (event.input === 'dto-throws-in-validate') payload.dto = 'throws-in-validate';
    if (event.input === 'validate-rejects') payload.check = 'reject';
    if (event.input === 'validate-throws') payload.check = 'throw';
    const value = event.input === 'bad-json' ? '{"aggregate":' : JSON.stringify(payload);
    const sim: SimMessage = {
      key: `${TOPIC}[${partition.index}]@${offset}`,
      event,
      message: {
        topic: TOPIC,
        partition: partition.index,
        offset,
        key: `agg-${event.aggregate}`,
        headers,
        decodedHeaders: [],
        value: Buffer.from(value),
        rawValue: true,
      },
      unendedWithoutFault: 0,
      mostUnendedWithoutFault: 0,
      endings: [],
    };
    partition.log.push(sim);
    this.messages.push(sim);
  }
}

/** class-transformer / class-validator as the flow calls them, throwing or refusing on demand. */
const fakeClassValidation = (): ClassValidation => ({
  plainToInstance: (cls, plain) => {
    if ((plain as Doc).dto === 'throws-in-transform') {
      throw new TypeError("Cannot read properties of undefined (reading 'name')");
    }
    return Object.assign(new cls(), plain);
  },
  validate: async (instance) => {
    const dto = (instance as Doc).dto;
    if (dto === 'throws-in-validate') throw new RangeError('a custom constraint threw');
    return dto === 'invalid'
      ? [{ property: 'dto', constraints: { isValid: 'dto is invalid' } }]
      : [];
  },
  hasConstraints: () => true,
});

function describeMessage(sim: SimMessage): string {
  return `${sim.key} (event ${sim.event.index}, ${sim.event.input}, script ${sim.event.script.join(',')})`;
}

/** A small seeded PRNG (the scheduler's choices follow the scenario's seed). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
