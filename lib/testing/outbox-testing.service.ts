import { Inject, Injectable } from '@nestjs/common';
import { IdempotentHandlerExplorer } from '../consumer/nest/idempotent-handler.explorer';
import { inProcessCalls } from '../operations/in-process/idempotent-handler.calls';
import type { InProcessMessage } from '../operations/in-process/idempotent-handler.calls';
import { toKafkaMessage } from '../publisher/kafka-message.mapper';
import { InMemoryConsumerRuntime } from './consumer/in-memory-consumer.runtime';
import type { TestingConsumerDeadLetter } from './consumer/in-memory-consumer.runtime';
import { describeEmitted, matchesEmitted } from './emitted-event';
import type { EmittedEvent, EmittedEventFilter } from './emitted-event';
import { OutboxDrainError, OutboxExpectationError } from './outbox-testing.errors';
import { RecordingOutboxWriter } from './recording-outbox.writer';
import { aggregateKey } from '../documents/outbox-event.document';
import type { OutboxEventRecord } from '../documents/outbox-event.document';

/** Injection token of the topic prefix `drain()` matches topic patterns with. */
export const OUTBOX_TESTING_TOPIC_PREFIX = Symbol('outbox:testing_topic_prefix');

/** What one `drain()` did. */
export interface DrainReport {
  /** Events delivered to every handler listening to them (or to none: nobody listens). */
  delivered: EmittedEvent[];
  /** Deliveries that ended unacknowledged; their events stay pending, later ones of their aggregate wait. */
  failures: Array<OutboxDrainError['failures'][number]>;
  /** Scheduled events left pending: not due at the drain's time (see `drain({ until })`). */
  notDue: EmittedEvent[];
}

/** Options of `OutboxTesting.drain()`. */
export interface DrainOptions {
  /** Throw `OutboxDrainError` when a delivery failed. Default true. */
  throwOnFailure?: boolean;
  /**
   * Move the testing clock forward to this time first, so scheduled events due by then are
   * delivered (in due-time order, each aggregate in commit order), without real waiting.
   */
  until?: Date;
}

const MAX_ROUNDS = 100;

type Filter = EmittedEventFilter | ((event: EmittedEvent) => boolean);

/**
 * What the code under test emitted, for assertions: only events of transactions that committed,
 * in commit order. Inject it from a module built with `OutboxTestingModule`.
 */
@Injectable()
export class OutboxTesting {
  private offset = 0;

  constructor(
    private readonly writer: RecordingOutboxWriter,
    private readonly explorer: IdempotentHandlerExplorer,
    private readonly consumers: InMemoryConsumerRuntime,
    @Inject(OUTBOX_TESTING_TOPIC_PREFIX) private readonly topicPrefix: string,
  ) {}

  /** The committed events (of one type, or matching a filter), in commit order. */
  emitted(filter: string | Filter = {}): EmittedEvent[] {
    const select = typeof filter === 'string' ? { eventType: filter } : filter;
    return this.writer.events.filter((event) => matchesEmitted(event, select));
  }

  /** Events committed but not delivered by `drain()` yet (scheduled ones not due included). */
  pending(): EmittedEvent[] {
    return this.writer.events.filter((event) => event.status === 'pending');
  }

  /** The committed events cancelled before they were due (`OutboxEmitter.cancel`). */
  cancelled(): EmittedEvent[] {
    return this.writer.events.filter((event) => event.status === 'cancelled');
  }

  /** The testing clock: the "server" time of `delayMs` and due times; `drain({ until })` moves it. */
  now(): Date {
    return this.writer.clock.now();
  }

  /**
   * Asserts that a committed transaction emitted `eventType` (matching `filter`, e.g. a part of
   * its payload; `times` times) and returns it; else throws `OutboxExpectationError`.
   */
  expectEmitted(
    eventType: string,
    filter: Omit<EmittedEventFilter, 'eventType'> = {},
    times?: number,
  ): EmittedEvent {
    const found = this.emitted({ ...filter, eventType });
    const ok = times === undefined ? found.length > 0 : found.length === times;
    if (!ok) {
      const wanted = Object.keys(filter).length > 0 ? ` matching ${JSON.stringify(filter)}` : '';
      const count = times === undefined ? 'at least once' : `${times} time(s)`;
      throw new OutboxExpectationError(
        `Expected ${eventType}${wanted} to be emitted ${count}, found ${found.length}. Emitted:\n` +
          describeEmitted(this.writer.events),
      );
    }
    return found[0];
  }

  /** Asserts that no committed transaction emitted `eventType` (or any event, without one). */
  expectNotEmitted(eventType?: string): void {
    const found = eventType ? this.emitted(eventType) : this.writer.events;
    if (found.length > 0) {
      throw new OutboxExpectationError(
        `Expected ${eventType ?? 'no event'} not to be emitted, found ${found.length}:\n` +
          describeEmitted(found),
      );
    }
  }

  /**
   * Delivers the pending events in commit order, in process, to the `@IdempotentHandler` methods
   * whose `@EventPattern` is the event type (as `OutboxKafkaServer` routes) or its topic
   * (`${topicPrefix}${aggregateType}`), through the production consume flow (same headers, dedupe,
   * retries without waiting, dead letters: `consumerDeadLetters()`); then what handlers emitted,
   * until none is left. An unacknowledged delivery leaves its event and the later ones of its
   * aggregate pending, and throws `OutboxDrainError` unless `{ throwOnFailure: false }`.
   * Scheduled events are delivered once due by `now()` (`{ until }` moves it first); cancelled
   * ones never.
   */
  async drain(options: DrainOptions = {}): Promise<DrainReport> {
    if (options.until !== undefined) {
      if (!(options.until instanceof Date) || Number.isNaN(options.until.getTime())) {
        throw new OutboxExpectationError('drain({ until }) needs a valid Date.');
      }
      this.writer.clock.advanceTo(options.until);
    }
    const report: DrainReport = { delivered: [], failures: [], notDue: [] };
    const blocked = new Set<string>();
    for (let round = 0; ; round++) {
      const due = dueInOrder(this.pending(), this.now()).filter(
        (event) => !blocked.has(aggregateKey(event)),
      );
      if (due.length === 0) break;
      if (round >= MAX_ROUNDS) {
        throw new OutboxExpectationError(
          `drain() still had events to deliver after ${MAX_ROUNDS} rounds: handlers keep emitting events that other handlers receive.`,
        );
      }
      for (const event of due) {
        if (blocked.has(aggregateKey(event))) continue;
        if (await this.deliver(event, report)) {
          // As the relay marks it: a cancel now says `published`, a later event inherits nothing.
          Object.assign(event, { delivered: true, status: 'published', publishedAt: this.now() });
          report.delivered.push(event);
        } else blocked.add(aggregateKey(event));
      }
    }
    const now = this.now();
    report.notDue = this.pending().filter((event) => event.availableAt && event.availableAt > now);
    if (report.failures.length > 0 && options.throwOnFailure !== false) {
      throw new OutboxDrainError(report.failures);
    }
    return report;
  }

  /** Makes a delivered event pending again: the next `drain()` delivers it once more (a duplicate). */
  redeliver(eventId: string): void {
    const event = this.writer.events.find((e) => e.eventId === eventId);
    if (!event) throw new OutboxExpectationError(`No emitted event ${eventId} to deliver again.`);
    Object.assign(event, { delivered: false, status: 'pending', publishedAt: undefined });
  }

  /** Messages `@IdempotentHandler` methods dead-lettered during `drain()`. */
  consumerDeadLetters(): TestingConsumerDeadLetter[] {
    return [...this.consumers.deadLetters];
  }

  /** Forgets every recorded event, processed record and dead letter (call it in `beforeEach`). */
  clear(): void {
    this.writer.clear();
    this.consumers.clear();
  }

  private async deliver(event: EmittedEvent, report: DrainReport): Promise<boolean> {
    const topic = `${this.topicPrefix}${event.aggregateType}`;
    const listening = inProcessCalls(this.explorer.handlers()).filter((h) =>
      h.patterns.some((p) => p === event.eventType || p === topic),
    );
    const { eventId, eventType } = event;
    for (const handler of listening) {
      const message = inProcessDelivery(event, topic, this.offset++);
      try {
        await handler.call(message);
      } catch (error) {
        report.failures.push({ eventId, eventType, handler: handler.name, error });
        return false;
      }
    }
    return true;
  }
}

/**
 * The events of `pending` due at `now`, in the order the relay publishes them: immediate events
 * first, then scheduled ones by due time; ties (and each aggregate's events, whose due times never
 * decrease in commit order unless one opted out of waiting) in commit order.
 */
function dueInOrder(pending: readonly EmittedEvent[], now: Date): EmittedEvent[] {
  return pending
    .map((event, index) => ({ event, index }))
    .filter(({ event }) => !event.availableAt || event.availableAt <= now)
    .sort(
      (a, b) =>
        (a.event.availableAt?.getTime() ?? -Infinity) -
          (b.event.availableAt?.getTime() ?? -Infinity) || a.index - b.index,
    )
    .map(({ event }) => event);
}

/**
 * The Kafka message the relay would send for `event`, as kafkajs would hand it to the transport:
 * the key, the value and the headers (CloudEvents envelope and trace context).
 */
function inProcessDelivery(event: EmittedEvent, topic: string, offset: number): InProcessMessage {
  const message = toKafkaMessage(event as unknown as OutboxEventRecord);
  return {
    topic,
    partition: 0,
    offset: String(offset),
    key: message.key,
    value: Buffer.from(message.value),
    headers: message.headers,
    timestamp: String(new Date(event.occurredAt).getTime()),
  };
}
