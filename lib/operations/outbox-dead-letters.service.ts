import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { ClientSession } from 'mongoose';
import { describeError } from '../common/errors/describe-error';
import { OutboxError } from '../common/errors/outbox.error';
import { OutboxConnectionHost } from '../common/outbox-connection.host';
import { OUTBOX_STORAGE_OPTIONS } from '../common/outbox.constants';
import { OUTBOX_EVENT_WRITER } from '../events/outbox-event.writer';
import type { OutboxDeadLetter } from '../documents/dead-letter.document';
import type { NewOutboxEvent, OutboxDoc } from '../documents/outbox-event.document';
import type { OutboxEventWriter } from '../events/outbox-event.writer';
import type { OutboxStorageOptions } from '../common/outbox-storage.options';
import { TransactionRunner } from '../transaction/transaction.runner';
import { DeadLetterOperations, pagesInOrder, requeueBatchSize } from './dead-letter.batches';
import { deadLetterQuery, type DeadLetterFilter } from './dead-letter.filter';
import { emptyRequeueResult } from './dead-letter.results';
import { tenantConnection } from '../tenants/tenant.connection';
import { OUTBOX_TENANTS_OPTIONS, type TenantsSetting } from '../tenants/tenants.resolved';
import type { DeadLetterRequeueResult } from './dead-letter.results';

/** Thrown by `OutboxDeadLetters.requeue` for an event id with no dead letter. */
export class OutboxDeadLetterNotFoundError extends OutboxError {
  constructor(readonly eventId: string) {
    super(`No dead-lettered event ${eventId}.`, 'OUTBOX_DEAD_LETTER_NOT_FOUND', { eventId });
  }
}

/** The order dead letters are requeued in: aggregate by aggregate, each in its commit order. */
const AGGREGATE_ORDER = ['aggregateType', 'aggregateId', 'sequence', 'outboxId', '_id'] as const;
/** The same order for events still marked dead in the outbox. */
const MARKED_ORDER = ['aggregateType', 'aggregateId', 'sequence', '_id'] as const;

/**
 * Events the relay gave up on (`collections.deadLetters`): list and count them by filter, put
 * them back into the outbox once the cause is fixed (one, or many in bounded batches), or
 * remove them. The CLI (`npx nestjs-outbox dead-letters ...`) runs on this service.
 */
@Injectable()
export class OutboxDeadLetters extends DeadLetterOperations<OutboxDeadLetter> {
  protected readonly logger = new Logger(OutboxDeadLetters.name);

  constructor(
    private readonly host: OutboxConnectionHost,
    private readonly runner: TransactionRunner,
    @Inject(OUTBOX_EVENT_WRITER) private readonly writer: OutboxEventWriter,
    @Inject(OUTBOX_STORAGE_OPTIONS) private readonly options: OutboxStorageOptions,
    @Optional() @Inject(OUTBOX_TENANTS_OPTIONS) private readonly tenants: TenantsSetting = false,
  ) {
    super(deadLetterQuery, 'dead letter(s)');
  }

  /**
   * This service on one tenant's dead letters (with the `tenants` option): in the tenant's
   * database, only those of the tenant (`tenant` field), requeued into that database's outbox.
   */
  forTenant(tenant: string): OutboxDeadLetters {
    return this.tenantView(this.tenants, tenant, (id) => ({ tenant: id }));
  }

  private get connection() {
    return tenantConnection(this.host.connection, this.target?.database);
  }

  protected get deadLetters() {
    return this.connection.collection<OutboxDeadLetter>(this.options.collections.deadLetters);
  }

  private get outbox() {
    return this.connection.collection<OutboxDoc>(this.options.collections.outbox);
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
      if (!(await this.requeueIn(eventId, this.runner.currentSession()!))) {
        throw new OutboxDeadLetterNotFoundError(eventId);
      }
    });
    this.logger.log(`Dead-lettered event ${eventId} requeued into the outbox`);
  }

  /**
   * Requeues every dead letter matching `filter` (as `requeue` does one), `batchSize` per
   * transaction, aggregate by aggregate in commit order, so the relay publishes each aggregate's
   * requeued events in their original order. Events still marked dead in the outbox (an
   * interrupted move) that match are requeued too. An event that cannot be requeued is reported
   * in `failed` and the others go on. With `dryRun`, nothing changes: the result lists what
   * would be requeued.
   */
  async requeueMany(
    filter: DeadLetterFilter = {},
    options: { batchSize?: number; dryRun?: boolean } = {},
  ): Promise<DeadLetterRequeueResult> {
    const batchSize = requeueBatchSize(options.batchSize);
    const sources = [
      { collection: this.deadLetters, query: this.query(filter), order: AGGREGATE_ORDER },
      {
        collection: this.outbox,
        query: {
          ...deadLetterQuery(filter, {
            errorField: 'deadLetter.error',
            timeField: 'deadLetter.at',
          }),
          status: 'dead',
          ...(this.target ? { tenant: this.target.tenant } : {}),
        },
        order: MARKED_ORDER,
      },
    ];
    const result = emptyRequeueResult(options.dryRun);
    // A letter whose event is also still marked dead in the outbox is listed (and requeued) once.
    const seen = new Set<string>();
    for (const { collection, query, order } of sources) {
      for await (const page of pagesInOrder<{ eventId: string }>(
        collection,
        query,
        order,
        batchSize,
        { eventId: 1 },
      )) {
        result.batches++;
        const ids = page.map((doc) => doc.eventId).filter((id) => !seen.has(id));
        for (const id of ids) seen.add(id);
        if (result.dryRun) {
          result.eventIds.push(...ids);
          continue;
        }
        const { done, failures } = await this.requeueBatch(ids);
        result.eventIds.push(...done);
        result.failed.push(...failures);
      }
    }
    result.requeued = result.dryRun ? 0 : result.eventIds.length;
    if (!result.dryRun) {
      this.logger.log(
        `${result.requeued} dead-lettered event(s) requeued in ${result.batches} batch(es)` +
          (result.failed.length > 0 ? `, ${result.failed.length} could not be` : ''),
      );
    }
    return result;
  }

  /** One transaction for the batch; if it fails, each event on its own, to report which fail. */
  private async requeueBatch(
    ids: string[],
  ): Promise<{ done: string[]; failures: DeadLetterRequeueResult['failed'] }> {
    try {
      const done = await this.runner.run(async () => {
        const session = this.runner.currentSession()!;
        const requeued: string[] = [];
        for (const id of ids) if (await this.requeueIn(id, session)) requeued.push(id);
        return requeued;
      });
      return { done, failures: [] };
    } catch {
      const done: string[] = [];
      const failures: DeadLetterRequeueResult['failed'] = [];
      for (const id of ids) {
        try {
          if (await this.runner.run(() => this.requeueIn(id, this.runner.currentSession()!))) {
            done.push(id);
          }
        } catch (error) {
          failures.push({ eventId: id, error: describeError(error) });
        }
      }
      return { done, failures };
    }
  }

  /** Requeues one event in `session`; false when there is nothing to requeue. */
  private async requeueIn(eventId: string, session: ClientSession): Promise<boolean> {
    const mine = this.target ? { tenant: this.target.tenant } : {};
    const letter = await this.deadLetters.findOne({ eventId, ...mine }, { session });
    const marked = await this.outbox.findOne({ eventId, status: 'dead', ...mine }, { session });
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
      return true;
    }
    if (!letter) return false;
    const event: NewOutboxEvent = {
      eventId: letter.eventId,
      eventType: letter.eventType,
      aggregateType: letter.aggregateType,
      aggregateId: letter.aggregateId,
      payload: letter.payload,
      ...(letter.headers ? { headers: letter.headers } : {}),
      occurredAt: letter.occurredAt,
      ...(this.target ? { tenant: this.target.tenant } : {}),
      status: 'pending',
      attempts: 0,
    };
    await this.writer.insert([event], session, undefined, this.target?.database);
    await this.deadLetters.deleteOne({ eventId }, { session });
    return true;
  }
}
