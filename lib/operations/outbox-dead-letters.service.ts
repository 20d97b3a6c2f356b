import { Inject, Injectable, Logger } from '@nestjs/common';
import { OutboxError } from '../common/errors/outbox.error';
import { OutboxConnectionHost } from '../common/outbox-connection.host';
import { OUTBOX_RESOLVED_OPTIONS } from '../common/outbox.constants';
import { OUTBOX_EVENT_WRITER } from '../events/outbox-event.writer';
import type { NewOutboxEvent, OutboxEventWriter } from '../events/outbox-event.writer';
import type { ResolvedOutboxOptions } from '../options/resolved-options';
import type { OutboxDeadLetter, OutboxDoc } from '../relay/mongo/mongo-outbox-relay.store';
import { TransactionRunner } from '../transaction/transaction.runner';

/** Thrown by `OutboxDeadLetters.requeue` for an event id with no dead letter. */
export class OutboxDeadLetterNotFoundError extends OutboxError {
  constructor(readonly eventId: string) {
    super(`No dead-lettered event ${eventId}.`, 'OUTBOX_DEAD_LETTER_NOT_FOUND', { eventId });
  }
}

/**
 * Events the relay gave up on (`collections.deadLetters`): inspect them, and once the cause is
 * fixed, put them back into the outbox to be published again.
 */
@Injectable()
export class OutboxDeadLetters {
  private readonly logger = new Logger(OutboxDeadLetters.name);

  constructor(
    private readonly host: OutboxConnectionHost,
    private readonly runner: TransactionRunner,
    @Inject(OUTBOX_EVENT_WRITER) private readonly writer: OutboxEventWriter,
    @Inject(OUTBOX_RESOLVED_OPTIONS) private readonly options: ResolvedOutboxOptions,
  ) {}

  private get deadLetters() {
    return this.host.connection.collection<OutboxDeadLetter>(this.options.collections.deadLetters);
  }

  private get outbox() {
    return this.host.connection.collection<OutboxDoc>(this.options.collections.outbox);
  }

  /** Dead letters, oldest first, optionally of one aggregate type or aggregate. */
  list(
    filter: { aggregateType?: string; aggregateId?: string } = {},
    limit = 100,
  ): Promise<OutboxDeadLetter[]> {
    const query: Record<string, string> = {};
    if (filter.aggregateType) query.aggregateType = filter.aggregateType;
    if (filter.aggregateId) query.aggregateId = filter.aggregateId;
    return this.deadLetters
      .find(query, { sort: { deadLetteredAt: 1 }, limit, projection: { _id: 0 } })
      .toArray() as Promise<OutboxDeadLetter[]>;
  }

  /**
   * Moves a dead letter back into the outbox as a pending event with the same `eventId` (so
   * consumers still deduplicate it) and zero attempts, in one transaction. The relay publishes
   * it like any new event, after the events of its aggregate already published. If the relay's
   * move was interrupted (the event is still in the outbox, marked dead), that document is
   * made pending again instead.
   */
  async requeue(eventId: string): Promise<void> {
    await this.runner.run(async () => {
      const session = this.runner.currentSession()!;
      const letter = await this.deadLetters.findOne({ eventId }, { session });
      const marked = await this.outbox.findOne({ eventId, status: 'dead' }, { session });
      if (marked) {
        await this.outbox.updateOne(
          { _id: marked._id },
          {
            $set: { status: 'pending', attempts: 0 },
            $unset: { deadLetter: '', nextAttemptAt: '', lastError: '', errorHistory: '' },
          },
          { session },
        );
        if (letter) await this.deadLetters.deleteOne({ eventId }, { session });
        return;
      }
      if (!letter) throw new OutboxDeadLetterNotFoundError(eventId);
      const event: NewOutboxEvent = {
        eventId: letter.eventId,
        eventType: letter.eventType,
        aggregateType: letter.aggregateType,
        aggregateId: letter.aggregateId,
        payload: letter.payload,
        ...(letter.headers ? { headers: letter.headers } : {}),
        occurredAt: letter.occurredAt,
        status: 'pending',
        attempts: 0,
      };
      await this.writer.insert([event], session);
      await this.deadLetters.deleteOne({ eventId }, { session });
    });
    this.logger.log(`Dead-lettered event ${eventId} requeued into the outbox`);
  }
}
