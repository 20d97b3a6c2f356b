import type { OutboxEventInput, OutboxEventRecord } from '../../../lib/common/envelope';
import type {
  AggregateRef,
  DeadLetterRecord,
  FailureRecord,
  OutboxRelayStore,
  PendingState,
} from '../../../lib/relay/relay.store';

type Doc = OutboxEventRecord & {
  errorHistory?: Array<{ at: Date; attempt: number; error: string }>;
};

/**
 * An in-memory outbox for tests of the relay core (`RelayEngine`): the store interface the
 * relay uses, not a database. `_id`s are zero-padded counters, so their order is insert order.
 */
export class InMemoryRelayStore implements OutboxRelayStore {
  readonly docs = new Map<string, Doc>();
  readonly deadLetters: Array<{ event: Doc; record: DeadLetterRecord }> = [];
  private counter = 0;
  /** Make the next store calls fail (simulates a database error). */
  failNext = 0;

  insert(
    input: Partial<OutboxEventInput> & { aggregateId: string },
    extra: Partial<Doc> = {},
  ): Doc {
    const n = ++this.counter;
    const doc: Doc = {
      _id: String(n).padStart(12, '0') as unknown as Doc['_id'],
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
    return doc;
  }

  pending(): Doc[] {
    return [...this.docs.values()].filter((doc) => doc.status === 'pending');
  }

  private check(): void {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('simulated database error');
    }
  }

  private copy(doc: Doc): Doc {
    return { ...doc, errorHistory: doc.errorHistory ? [...doc.errorHistory] : undefined };
  }

  async findPendingState(ids: readonly unknown[]): Promise<PendingState[]> {
    this.check();
    return ids
      .map((id) => this.docs.get(String(id)))
      .filter((doc): doc is Doc => doc?.status === 'pending')
      .map((doc) => {
        const { payload: _payload, headers: _headers, ...state } = this.copy(doc);
        return state;
      });
  }

  async findPendingOfAggregate(ref: AggregateRef, limit: number): Promise<OutboxEventRecord[]> {
    this.check();
    return this.pending()
      .filter(
        (doc) => doc.aggregateType === ref.aggregateType && doc.aggregateId === ref.aggregateId,
      )
      .sort(inAggregateOrder)
      .slice(0, limit)
      .map((doc) => this.copy(doc));
  }

  async findPendingPage(
    after: OutboxEventRecord | undefined,
    until: Date,
    limit: number,
  ): Promise<OutboxEventRecord[]> {
    this.check();
    return this.pending()
      .filter((doc) => doc.occurredAt.getTime() <= until.getTime())
      .filter((doc) => after === undefined || inDrainOrder(after as Doc, doc) < 0)
      .sort(inDrainOrder)
      .slice(0, limit)
      .map((doc) => this.copy(doc));
  }

  async findRetryingAggregates(limit: number): Promise<Array<AggregateRef & { retryAt: Date }>> {
    this.check();
    const out = new Map<string, AggregateRef & { retryAt: Date }>();
    for (const doc of this.pending()) {
      if (!doc.nextAttemptAt) continue;
      const key = `${doc.aggregateType}/${doc.aggregateId}`;
      const existing = out.get(key);
      if (!existing || existing.retryAt > doc.nextAttemptAt) {
        out.set(key, {
          aggregateType: doc.aggregateType,
          aggregateId: doc.aggregateId,
          retryAt: doc.nextAttemptAt,
        });
      }
    }
    return [...out.values()].slice(0, limit);
  }

  async findStaleAggregates(before: Date, now: Date, limit: number): Promise<AggregateRef[]> {
    this.check();
    const out = new Map<string, AggregateRef>();
    for (const doc of this.pending()) {
      if (doc.occurredAt >= before) continue;
      if (doc.nextAttemptAt && doc.nextAttemptAt > now) continue;
      out.set(`${doc.aggregateType}/${doc.aggregateId}`, {
        aggregateType: doc.aggregateType,
        aggregateId: doc.aggregateId,
      });
    }
    return [...out.values()].slice(0, limit);
  }

  async markPublished(ids: readonly unknown[], at: Date): Promise<void> {
    this.check();
    for (const id of ids) {
      const doc = this.docs.get(String(id));
      if (doc?.status === 'pending') {
        doc.status = 'published';
        doc.publishedAt = at;
        delete doc.nextAttemptAt;
      }
    }
  }

  async recordFailure(event: OutboxEventRecord, failure: FailureRecord): Promise<void> {
    this.check();
    const doc = this.docs.get(String(event._id));
    if (doc?.status !== 'pending') return;
    doc.attempts = failure.attempts;
    doc.nextAttemptAt = failure.nextAttemptAt;
    doc.lastError = failure.error;
    doc.errorHistory = [
      ...(doc.errorHistory ?? []),
      { at: failure.at, attempt: failure.attempts, error: failure.error },
    ];
  }

  async deadLetter(event: OutboxEventRecord, record: DeadLetterRecord): Promise<void> {
    this.check();
    const doc = this.docs.get(String(event._id));
    if (!doc) return;
    this.deadLetters.push({ event: this.copy(doc), record });
    this.docs.delete(String(event._id));
  }

  async pendingStats(): Promise<{ count: number; oldestOccurredAt?: Date }> {
    const pending = this.pending();
    return { count: pending.length, oldestOccurredAt: pending[0]?.occurredAt };
  }
}

/** The drain's order: aggregate by aggregate (binary string order, as MongoDB), then aggregate order. */
function inDrainOrder(a: Doc, b: Doc): number {
  const byString = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
  return (
    byString(a.aggregateType, b.aggregateType) ||
    byString(a.aggregateId, b.aggregateId) ||
    inAggregateOrder(a, b)
  );
}

/** MongoDB's order for `AGGREGATE_ORDER`: a missing sequence sorts first, then `_id`. */
function inAggregateOrder(a: Doc, b: Doc): number {
  const sa = a.sequence ?? -Infinity;
  const sb = b.sequence ?? -Infinity;
  if (sa !== sb) return sa < sb ? -1 : 1;
  return String(a._id) < String(b._id) ? -1 : String(a._id) > String(b._id) ? 1 : 0;
}
