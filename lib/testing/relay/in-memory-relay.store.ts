import { compareDueRuns, dueAggregatesOf } from '../../relay/scheduled/due-aggregates.collector';
import { cappedScheduledCount } from '../../relay/ports/outbox-relay.store';
import type { OutboxEventInput } from '../../documents/outbox-event.envelope';
import {
  aggregateKey,
  compareAggregates,
  inDrainOrder,
  type OutboxDoc,
  type OutboxEventRecord,
} from '../../documents/outbox-event.document';
import type {
  AggregateRef,
  DeadLetterRecord,
  DueAggregate,
  FailureRecord,
  MarkedDead,
  OutboxRelayStore,
  PendingState,
  RelayFence,
  ScheduledStats,
  StaleEvent,
} from '../../relay/ports/outbox-relay.store';

/**
 * An in-memory outbox for unit tests of the relay's parts and for the relay-core bench: the
 * store port the relay uses, not a database. `_id`s are zero-padded counters, so their order is
 * insert order. Writes honour the owner stamp like the MongoDB store.
 *
 * The simulation has its own (test/simulation/mongo/sim-outbox.store.ts): there every call is an
 * operation on the simulated network and replica set (delayed, faulty, rolled back by failovers),
 * recorded as a fact the invariants check; here a call applies at once to one Map. One store
 * would bring the simulated world into lib/, which ships, or into every unit spec of the relay.
 */
export class InMemoryRelayStore implements OutboxRelayStore {
  readonly docs = new Map<string, OutboxDoc>();
  readonly deadLetters: Array<{
    event: MarkedDead;
    errors: Array<{ at: Date; attempt: number; error: string }>;
  }> = [];
  private counter = 0;
  /** Make the next store calls fail (simulates a database error). */
  failNext = 0;
  /** Every write call, in order (method and ids). */
  readonly writes: Array<{ method: string; ids: string[]; fence: RelayFence }> = [];
  /** The "server's" clock `serverTime()` answers (a spec may replace it with a virtual one). */
  serverNow: () => Date = () => new Date();
  /**
   * The time by which every write is majority-committed, as `majorityTime()` answers it (never
   * after `serverNow`). By default `serverNow`: every write here is visible to every read at once;
   * a spec may hold it back to model writes still replicating.
   */
  majorityNow: () => Date = () => this.serverNow();
  /**
   * What `majorityWriteTime()` answers (the time of a no-op majority write, never after
   * `serverNow`). By default `majorityNow`; a spec may make `majorityNow` coarser (whole seconds,
   * as mongod reports it) and this one precise.
   */
  majorityWriteNow: () => Date = () => this.majorityNow();

  insert(
    input: Partial<OutboxEventInput> & { aggregateId: string },
    extra: Partial<OutboxDoc> = {},
  ): OutboxEventRecord {
    const n = ++this.counter;
    const doc: OutboxDoc = {
      _id: String(n).padStart(12, '0') as unknown as OutboxDoc['_id'],
      eventId: `evt-${String(n).padStart(6, '0')}`,
      aggregateType: input.aggregateType ?? 'Order',
      aggregateId: input.aggregateId,
      eventType: input.eventType ?? 'OrderCreated',
      payload: input.payload ?? { n },
      occurredAt: new Date(),
      status: 'pending',
      attempts: 0,
      ...extra,
    };
    this.docs.set(String(doc._id), doc);
    return this.copy(doc) as OutboxEventRecord;
  }

  doc(id: unknown): OutboxDoc | undefined {
    return this.docs.get(String(id));
  }

  pending(): OutboxDoc[] {
    return [...this.docs.values()].filter((doc) => doc.status === 'pending');
  }

  private check(): void {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('simulated database error');
    }
  }

  private copy(doc: OutboxDoc): OutboxDoc {
    return { ...doc, errorHistory: doc.errorHistory ? [...doc.errorHistory] : undefined };
  }

  private writable(
    id: unknown,
    fence: RelayFence,
    status: OutboxDoc['status'] = 'pending',
  ): OutboxDoc | undefined {
    const doc = this.docs.get(String(id));
    if (!doc || doc.status !== status) return undefined;
    if (fence !== null) {
      if (doc.relayFence !== undefined && doc.relayFence > fence) return undefined;
      doc.relayFence = fence;
    }
    return doc;
  }

  private write(method: string, ids: readonly unknown[], fence: RelayFence): void {
    this.check();
    this.writes.push({ method, ids: ids.map(String), fence });
  }

  async findPendingState(ids: readonly unknown[]): Promise<PendingState[]> {
    this.check();
    return ids
      .map((id) => this.docs.get(String(id)))
      .filter((doc): doc is OutboxDoc => doc?.status === 'pending')
      .map((doc) => {
        const { payload: _payload, headers: _headers, ...state } = this.copy(doc);
        return state as PendingState;
      });
  }

  async findPendingOfAggregates(
    refs: readonly AggregateRef[],
    limit: number,
    dueBy?: Date,
  ): Promise<OutboxEventRecord[]> {
    this.check();
    const keys = new Set(refs.map(aggregateKey));
    return this.pending()
      .filter(
        (doc) =>
          keys.has(aggregateKey(doc)) && (!dueBy || !doc.availableAt || doc.availableAt <= dueBy),
      )
      .sort(inDrainOrder)
      .slice(0, limit)
      .map((doc) => this.copy(doc) as OutboxEventRecord);
  }

  async serverTime(): Promise<Date> {
    this.check();
    return this.serverNow();
  }

  async majorityTime(): Promise<Date> {
    this.check();
    const [majority, server] = [this.majorityNow(), this.serverNow()];
    return majority < server ? majority : server;
  }

  async majorityWriteTime(): Promise<Date> {
    this.check();
    const [majority, server] = [this.majorityWriteNow(), this.serverNow()];
    return majority < server ? majority : server;
  }

  /** Pending scheduled events by (availableAt, _id). */
  private scheduled(): OutboxDoc[] {
    return this.pending()
      .filter((doc) => doc.availableAt !== undefined)
      .sort(
        (a, b) =>
          (a.availableAt as Date).getTime() - (b.availableAt as Date).getTime() ||
          (String(a._id) < String(b._id) ? -1 : 1),
      );
  }

  /** The production store's reads (`DueAggregatesCollector`) over the documents in memory. */
  async findDueAggregates(dueBy: Date, limit: number, marked: boolean): Promise<DueAggregate[]> {
    this.check();
    const due = this.scheduled()
      .filter((doc) => (doc.availableAt as Date) <= dueBy && Boolean(doc.nextAttemptAt) === marked)
      .map((doc) => ({ ...doc, availableAt: doc.availableAt as Date }))
      .sort(compareDueRuns);
    return dueAggregatesOf(due, limit);
  }

  async nextDueAt(after?: Date): Promise<Date | undefined> {
    this.check();
    return this.scheduled().find((doc) => !after || (doc.availableAt as Date) > after)?.availableAt;
  }

  async scheduledStats(now: Date): Promise<ScheduledStats> {
    const scheduled = this.scheduled();
    if (scheduled.length === 0) return { count: 0 };
    return {
      ...cappedScheduledCount(scheduled.length),
      oldestOverdueAt: scheduled.find((doc) => (doc.availableAt as Date) <= now)?.availableAt,
      nextDueAt: scheduled.find((doc) => (doc.availableAt as Date) > now)?.availableAt,
    };
  }

  async findPendingPage(
    after: OutboxEventRecord | undefined,
    limit: number,
  ): Promise<OutboxEventRecord[]> {
    this.check();
    return this.pending()
      .filter((doc) => doc.availableAt === undefined)
      .filter((doc) => after === undefined || inDrainOrder(after as OutboxDoc, doc) < 0)
      .sort(inDrainOrder)
      .slice(0, limit)
      .map((doc) => this.copy(doc) as OutboxEventRecord);
  }

  async findRetryingAggregates(
    after: AggregateRef | undefined,
    limit: number,
  ): Promise<Array<AggregateRef & { retryAt: Date }>> {
    this.check();
    const out = new Map<string, AggregateRef & { retryAt: Date }>();
    for (const doc of this.pending().sort(inDrainOrder)) {
      if (!doc.nextAttemptAt) continue;
      if (after && compareAggregates(doc, after) <= 0) continue;
      const key = aggregateKey(doc);
      const existing = out.get(key);
      if (!existing || existing.retryAt > doc.nextAttemptAt) {
        const { aggregateType, aggregateId, nextAttemptAt: retryAt } = doc;
        out.set(key, { aggregateType, aggregateId, retryAt });
      }
    }
    return [...out.values()].slice(0, limit);
  }

  async findStaleEvents(
    afterId: unknown,
    olderThan: Date,
    dueBy: Date,
    limit: number,
  ): Promise<StaleEvent[]> {
    this.check();
    return this.pending()
      .filter((doc) => afterId === undefined || String(doc._id) > String(afterId))
      .filter((doc) => doc.availableAt === undefined)
      .filter(
        (doc) => doc.occurredAt < olderThan && (!doc.nextAttemptAt || doc.nextAttemptAt <= dueBy),
      )
      .sort((a, b) => (String(a._id) < String(b._id) ? -1 : 1))
      .slice(0, limit)
      .map(({ _id, aggregateType, aggregateId }) => ({ _id, aggregateType, aggregateId }));
  }

  async pendingStats(): Promise<{ count: number; oldestOccurredAt?: Date }> {
    const pending = this.pending().filter((doc) => doc.availableAt === undefined);
    return { count: pending.length, oldestOccurredAt: pending[0]?.occurredAt };
  }

  async findMarkedDead(limit: number): Promise<MarkedDead[]> {
    this.check();
    return [...this.docs.values()]
      .filter((doc) => doc.status === 'dead')
      .slice(0, limit)
      .map((doc) => this.copy(doc) as unknown as MarkedDead);
  }

  async markPublished(ids: readonly unknown[], at: Date, fence: RelayFence): Promise<void> {
    this.write('markPublished', ids, fence);
    for (const id of ids) {
      const doc = this.writable(id, fence);
      if (!doc) continue;
      doc.status = 'published';
      doc.publishedAt = at;
      delete doc.nextAttemptAt;
    }
  }

  async markHeld(ids: readonly unknown[], retryAt: Date, fence: RelayFence): Promise<void> {
    this.write('markHeld', ids, fence);
    for (const id of ids) {
      const doc = this.docs.get(String(id));
      if (doc?.status !== 'pending' || doc.nextAttemptAt) continue;
      const target = this.writable(id, fence);
      if (target) target.nextAttemptAt = retryAt;
    }
  }

  async recordFailure(
    event: OutboxEventRecord,
    failure: FailureRecord,
    fence: RelayFence,
  ): Promise<void> {
    this.write('recordFailure', [event._id], fence);
    const doc = this.writable(event._id, fence);
    if (!doc) return;
    doc.attempts = failure.attempts;
    doc.nextAttemptAt = failure.nextAttemptAt;
    doc.lastError = failure.error;
    doc.errorHistory = [
      ...(doc.errorHistory ?? []),
      { at: failure.at, attempt: failure.attempts, error: failure.error },
    ];
  }

  async markDead(
    event: OutboxEventRecord,
    record: DeadLetterRecord,
    fence: RelayFence,
  ): Promise<void> {
    this.write('markDead', [event._id], fence);
    const doc = this.writable(event._id, fence);
    if (!doc) return;
    doc.status = 'dead';
    doc.deadLetter = record;
    delete doc.nextAttemptAt;
  }

  async copyToDeadLetters(event: MarkedDead): Promise<void> {
    this.write('copyToDeadLetters', [event._id], null);
    if (this.deadLetters.some((letter) => letter.event.eventId === event.eventId)) return;
    const { deadLetter } = event;
    const errors = [
      ...(event.errorHistory ?? []),
      { at: deadLetter.at, attempt: deadLetter.attempts, error: deadLetter.error },
    ];
    this.deadLetters.push({ event: { ...event }, errors });
  }

  async removeDead(id: unknown, fence: RelayFence): Promise<void> {
    this.write('removeDead', [id], fence);
    if (this.writable(id, fence, 'dead')) this.docs.delete(String(id));
  }
}
