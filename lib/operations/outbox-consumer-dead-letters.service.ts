import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { describeError } from '../common/errors/describe-error';
import { OutboxConnectionHost } from '../common/outbox-connection.host';
import { OUTBOX_STORAGE_OPTIONS } from '../common/outbox.constants';
import type { mongo } from 'mongoose';
import { offsetSortKey, restartFailureCount } from '../consumer/stores/consumer-failure.store';
import type { ConsumerDeadLetterDocument } from '../documents/consumer-dead-letter.document';
import type { ProcessedEventDocument } from '../documents/processed-event.document';
import { IdempotentHandlerExplorer } from '../consumer/nest/idempotent-handler.explorer';
import type { OutboxStorageOptions } from '../common/outbox-storage.options';
import { DeadLetterOperations, pagesInOrder, requeueBatchSize } from './dead-letter.batches';
import { consumerDeadLetterQuery, type DeadLetterFilter } from './dead-letter.filter';
import { emptyRequeueResult } from './dead-letter.results';
import type { DeadLetterRequeueResult } from './dead-letter.results';
import { tenantConnection } from '../tenants/tenant.connection';
import { TENANT_HEADER } from '../tenants/tenant.header';
import { OUTBOX_TENANTS_OPTIONS, type TenantsSetting } from '../tenants/tenants.resolved';
import { inProcessCalls, type IdempotentHandlerCall } from './in-process/idempotent-handler.calls';

/** Kafka order of a consumer's messages: per topic and partition, by numeric offset. */
const KAFKA_ORDER = ['topic', 'partition', 'offsetKey', '_id'] as const;
/** Sort keys added to letters of an older version per write. */
const OFFSET_KEY_WRITES = 500;

/**
 * Messages `@IdempotentHandler` consumers gave up on (`status: 'dead'` documents of
 * `collections.consumerDeadLetters`): list, count and purge them by filter anywhere; requeue
 * them in the app that runs their handler, which applies each one again, in process, through the
 * production delivery (its transaction, dedupe record, retries), so only that consumer sees it
 * again: nothing is published to Kafka.
 */
@Injectable()
export class OutboxConsumerDeadLetters extends DeadLetterOperations<ConsumerDeadLetterDocument> {
  protected readonly logger = new Logger(OutboxConsumerDeadLetters.name);

  constructor(
    private readonly host: OutboxConnectionHost,
    @Inject(OUTBOX_STORAGE_OPTIONS) private readonly options: OutboxStorageOptions,
    private readonly explorer: IdempotentHandlerExplorer,
    @Optional() @Inject(OUTBOX_TENANTS_OPTIONS) private readonly tenants: TenantsSetting = false,
  ) {
    super(consumerDeadLetterQuery, 'consumer dead letter(s)');
  }

  /**
   * This service on one tenant's consumer dead letters (with the `tenants` option): in the
   * tenant's database, those whose message has the tenant's `ce_tenant` header. A requeue applies
   * them again as their consumer does: the processed record goes to that tenant's database.
   */
  forTenant(tenant: string): OutboxConsumerDeadLetters {
    return this.tenantView(this.tenants, tenant, (id) => ({
      headers: { $elemMatch: { key: TENANT_HEADER, value: id } },
    }));
  }

  private get connection() {
    return tenantConnection(this.host.connection, this.target?.database);
  }

  protected get deadLetters() {
    return this.connection.collection<ConsumerDeadLetterDocument>(
      this.options.collections.consumerDeadLetters,
    );
  }

  private get processed() {
    return this.connection.collection<ProcessedEventDocument>(
      this.options.collections.processedEvents,
    );
  }

  /**
   * Applies the dead letters matching `filter` again, `batchSize` read at a time, in Kafka order
   * (topic, partition, offset: each aggregate's events in their order), each through its
   * consumer's `@IdempotentHandler` method in this app, as a new delivery of the kept message:
   * its transaction, its `(consumer, eventId)` record, its retries. A dead letter is removed
   * once its event is applied (or was already); one that fails again stays dead-lettered with
   * its new error and is reported in `failed`, as are letters that cannot be replayed (no event
   * id, a truncated value, no handler of that consumer in this app). With `dryRun`, nothing
   * runs: the result lists what would be requeued.
   */
  async requeueMany(
    filter: DeadLetterFilter = {},
    options: { batchSize?: number; dryRun?: boolean } = {},
  ): Promise<DeadLetterRequeueResult> {
    const batchSize = requeueBatchSize(options.batchSize);
    const query = this.query(filter) as Record<string, unknown>;
    const handlers = new Map<string, IdempotentHandlerCall>();
    for (const handler of inProcessCalls(this.explorer.handlers())) {
      handlers.set(handler.settings.consumer, handler);
    }
    const result = emptyRequeueResult(options.dryRun);
    await this.addOffsetKeys(query);
    for await (const page of pagesInOrder<ConsumerDeadLetterDocument>(
      this.deadLetters,
      query,
      KAFKA_ORDER,
      batchSize,
    )) {
      result.batches++;
      for (const letter of page) {
        // In a dry run, every letter that can be replayed counts as one that would be.
        const outcome =
          this.unreplayable(letter, handlers) ??
          (result.dryRun ? 'applied' : await this.replay(letter, handlers.get(letter.consumer)!));
        if (outcome === 'applied') result.eventIds.push(letter.eventId as string);
        else result.failed.push({ eventId: String(letter.eventId), error: outcome });
      }
    }
    result.requeued = result.dryRun ? 0 : result.eventIds.length;
    if (!result.dryRun) {
      this.logger.log(
        `${result.requeued} consumer dead letter(s) applied again` +
          (result.failed.length > 0 ? `, ${result.failed.length} not` : ''),
      );
    }
    return result;
  }

  /**
   * Gives the letters `query` selects that a version before `offsetKey` wrote (they have only
   * the offset as text) their sort key, so that they are replayed in Kafka order too.
   */
  private async addOffsetKeys(query: Record<string, unknown>): Promise<void> {
    const old = this.deadLetters.find(
      { $and: [query, { offsetKey: { $exists: false } }] },
      { projection: { _id: 1, offset: 1 } },
    );
    let writes: mongo.AnyBulkWriteOperation<ConsumerDeadLetterDocument>[] = [];
    const flush = async () => {
      if (writes.length > 0) await this.deadLetters.bulkWrite(writes, { ordered: false });
      writes = [];
    };
    for await (const letter of old) {
      writes.push({
        updateOne: {
          filter: { _id: letter._id, offsetKey: { $exists: false } },
          update: { $set: { offsetKey: offsetSortKey(String(letter.offset)) } },
        },
      });
      if (writes.length === OFFSET_KEY_WRITES) await flush();
    }
    await flush();
  }

  /** Why `letter` cannot be replayed here, or undefined. */
  private unreplayable(
    letter: ConsumerDeadLetterDocument,
    handlers: Map<string, IdempotentHandlerCall>,
  ): string | undefined {
    if (letter.eventId === null) return 'the message has no event id, so it cannot be deduplicated';
    if (letter.valueTruncated) return 'only a truncated copy of its value was kept';
    if (!handlers.has(letter.consumer)) {
      return `no @IdempotentHandler with consumer "${letter.consumer}" in this app: requeue it in the app that runs it`;
    }
    return undefined;
  }

  /** One new delivery of the kept message; 'applied', or why not. */
  private async replay(
    letter: ConsumerDeadLetterDocument & { _id?: unknown },
    handler: IdempotentHandlerCall,
  ): Promise<'applied' | string> {
    const eventId = letter.eventId as string;
    const value =
      letter.value === null ? null : Buffer.from(letter.value, letter.valueEncoding ?? 'utf8');
    const headers: Record<string, string> = {};
    for (const { key, value: text } of letter.headers ?? []) headers[key] = text;
    const message = {
      topic: letter.topic,
      partition: letter.partition,
      offset: letter.offset,
      key: letter.key,
      value,
      headers,
      timestamp: letter.timestamp ?? String(Date.now()),
    };
    // A requeue is a new start: the event gets `maxFailures` attempts again, not one.
    await restartFailureCount(this.deadLetters, letter.consumer, eventId);
    try {
      await handler.call(message);
    } catch (error) {
      return `the delivery did not end (${describeError(error)}); it stays dead-lettered`;
    }
    const applied = await this.processed.findOne({ consumer: letter.consumer, eventId });
    if (!applied) {
      const again = await this.deadLetters.findOne({ consumer: letter.consumer, eventId });
      return `failed again: ${again?.lastError ?? 'unknown error'}`;
    }
    await this.deadLetters.deleteOne({ consumer: letter.consumer, eventId, status: 'dead' });
    return 'applied';
  }
}
