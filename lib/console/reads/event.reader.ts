import { Inject, Injectable } from '@nestjs/common';
import type { ConsumerDeadLetterDocument } from '../../documents/consumer-dead-letter.document';
import type { OutboxDeadLetter } from '../../documents/dead-letter.document';
import type { OutboxDoc } from '../../documents/outbox-event.document';
import type { ProcessedEventDocument } from '../../documents/processed-event.document';
import { createTopicRouter } from '../../publisher/topic-name';
import { OUTBOX_CONSOLE_OPTIONS } from '../console.constants';
import type { ResolvedConsoleOptions } from '../console.options';
import { ConsoleSources } from '../console.sources';

export interface EventJourney {
  eventId: string;
  /** The outbox document (absent once moved to the dead letters, or removed by retention). */
  event?: OutboxDoc;
  /** The topic the relay of this app sends it to (its routing), when this app has a relay. */
  topic?: string;
  relayDeadLetter?: OutboxDeadLetter;
  /** Consumers' records of it: applied (processed) and failing or dead-lettered. */
  processed: ProcessedEventDocument[];
  consumerLetters: ConsumerDeadLetterDocument[];
  /** The consumers looked up (this app's, and the `consumers` option's). */
  consumers: string[];
  /** Its aggregate's most recent events, in aggregate order. */
  aggregate: OutboxDoc[];
}

/**
 * One event's journey, each read on an index: the outbox document on `outbox_event_id_unique`;
 * the relay's dead letter on `outbox_dead_letter_event_id`; the consumers' processed records
 * and dead letters on their `consumer_1_eventId_1` (one index point per known consumer); the
 * aggregate's recent events on `outbox_console_by_aggregate`.
 */
@Injectable()
export class EventReader {
  constructor(
    private readonly sources: ConsoleSources,
    @Inject(OUTBOX_CONSOLE_OPTIONS) private readonly options: ResolvedConsoleOptions,
  ) {}

  consumers(): string[] {
    return [...new Set([...this.sources.consumersHere(), ...this.options.consumers])].sort();
  }

  async read(eventId: string): Promise<EventJourney> {
    const c = this.sources.collections;
    const consumers = this.consumers();
    const byConsumer = { consumer: { $in: consumers }, eventId };
    const [event, relayDeadLetter, processed, consumerLetters] = await Promise.all([
      c.outbox.findOne({ eventId }),
      c.deadLetters.findOne({ eventId }),
      c.processedEvents.find(byConsumer, { sort: { consumer: 1 } }).toArray(),
      c.consumerDeadLetters.find(byConsumer, { sort: { consumer: 1 } }).toArray(),
    ]);
    const source = event ?? relayDeadLetter ?? undefined;
    const aggregate = source ? await this.aggregate(source.aggregateType, source.aggregateId) : [];
    return {
      eventId,
      event: event ?? undefined,
      topic: source ? this.topicOf(source) : undefined,
      relayDeadLetter: relayDeadLetter ?? undefined,
      processed,
      consumerLetters,
      consumers,
      aggregate,
    };
  }

  /** The aggregate's last `pageSize` events, oldest first (`sequence`, then `_id`). */
  async aggregate(aggregateType: string, aggregateId: string): Promise<OutboxDoc[]> {
    const recent = await this.sources.collections.outbox
      .find(
        { aggregateType, aggregateId },
        {
          sort: { aggregateType: -1, aggregateId: -1, sequence: -1, _id: -1 },
          limit: this.options.pageSize,
          projection: { payload: 0, headers: 0, errorHistory: 0 },
        },
      )
      .toArray();
    return recent.reverse();
  }

  private topicOf(event: Pick<OutboxDoc, 'aggregateType' | 'aggregateId' | 'eventType'>) {
    const relay = this.sources.relayOptions;
    if (!relay || relay.publisher) return undefined;
    try {
      return createTopicRouter({ route: relay.topic, prefix: relay.topicPrefix })(
        event as Parameters<ReturnType<typeof createTopicRouter>>[0],
      );
    } catch {
      return undefined;
    }
  }
}
