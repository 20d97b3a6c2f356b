import type { OutboxConnectionHost } from '../common/outbox-connection.host';
import type { DiscoveredHandler } from '../consumer/nest/idempotent-handler.explorer';
import type { IdempotentHandlerExplorer } from '../consumer/nest/idempotent-handler.explorer';
import type { IdempotentHandlerSettings } from '../consumer/idempotent-handler.options';
import type { OutboxEventWriter } from '../events/outbox-event.writer';
import type { ResolvedOutboxOptions } from '../options/resolved-options';
import type { TransactionRunner } from '../transaction/transaction.runner';
import { OutboxConsumerDeadLetters } from './outbox-consumer-dead-letters.service';
import { OutboxDeadLetters } from './outbox-dead-letters.service';

type Doc = Record<string, unknown>;

/** MongoDB's ascending order for the values these specs use: missing/null, numbers, strings, ids. */
function compare(a: unknown, b: unknown): number {
  const rank = (v: unknown) => (v == null ? 0 : typeof v === 'number' ? 1 : 2);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (a == null) return 0;
  return (a as number | string) < (b as number | string) ? -1 : a === b ? 0 : 1;
}

/** The subset of query operators the dead-letter services send (NOT a MongoDB). */
function matches(doc: Doc, query: Doc): boolean {
  return Object.entries(query).every(([key, condition]) => {
    if (key === '$and') return (condition as Doc[]).every((q) => matches(doc, q));
    if (key === '$or') return (condition as Doc[]).some((q) => matches(doc, q));
    const value = doc[key];
    if (condition === null || typeof condition !== 'object' || Array.isArray(condition)) {
      return condition === null ? value == null : value === condition;
    }
    return Object.entries(condition as Doc).every(([op, operand]) => {
      switch (op) {
        case '$gt':
          return value != null && compare(value, operand) > 0;
        case '$ne':
          return operand === null ? value != null : value !== operand;
        case '$in':
          return (operand as unknown[]).includes(value);
        case '$nin':
          return !(operand as unknown[]).includes(value);
        case '$exists':
          return (value !== undefined) === operand;
        default:
          throw new Error(`the fake collection does not know ${op}`);
      }
    });
  });
}

/** A collection in memory that records the query of every `find`. */
class FakeCollection {
  readonly queries: Doc[] = [];
  constructor(readonly docs: Doc[]) {}

  find(query: Doc, options: { sort?: Record<string, 1>; skip?: number; limit?: number } = {}) {
    this.queries.push(query);
    const fields = Object.keys(options.sort ?? {});
    const found = this.docs
      .filter((doc) => matches(doc, query))
      .sort((a, b) => {
        for (const field of fields) {
          const order = compare(a[field], b[field]);
          if (order !== 0) return order;
        }
        return 0;
      })
      .slice(options.skip ?? 0)
      .slice(0, options.limit ?? Infinity)
      .map((doc) => ({ ...doc }));
    return {
      toArray: async () => found,
      async *[Symbol.asyncIterator]() {
        yield* found;
      },
    };
  }

  async bulkWrite(writes: Array<{ updateOne: { filter: Doc; update: { $set: Doc } } }>) {
    for (const { updateOne } of writes) {
      const doc = this.docs.find((d) => matches(d, updateOne.filter));
      if (doc) Object.assign(doc, updateOne.update.$set);
    }
    return {};
  }

  /** The size of the largest query sent, as JSON. */
  largestQuery(): number {
    return Math.max(...this.queries.map((query) => JSON.stringify(query).length));
  }
}

const options = {
  collections: {
    outbox: 'outbox',
    deadLetters: 'dead_letters',
    consumerDeadLetters: 'consumer_dead_letters',
    processedEvents: 'processed',
  },
} as unknown as ResolvedOutboxOptions;

function hostOf(collections: Record<string, FakeCollection>): OutboxConnectionHost {
  const empty = new FakeCollection([]);
  return {
    connection: { collection: (name: string) => collections[name] ?? empty },
  } as unknown as OutboxConnectionHost;
}

/** What the app's explorer found at bootstrap. */
const explorerOf = (handlers: DiscoveredHandler[]) =>
  ({ handlers: () => handlers }) as unknown as IdempotentHandlerExplorer;

/** An app with no `@IdempotentHandler`: every consumer dead letter is one it cannot replay. */
const noHandlers = explorerOf([]);

/** An app whose `Billing.onOrder` is the `@IdempotentHandler` of consumer "billing" (never called here). */
class Billing {
  onOrder(): void {}
}
const billing = new Billing();
const billingHandler = explorerOf([
  {
    settings: { consumer: 'billing' } as IdempotentHandlerSettings,
    method: billing.onOrder,
    key: 'onOrder',
    instance: billing,
    inController: true,
  },
]);

function consumerDeadLetters(letters: FakeCollection, app = noHandlers) {
  return new OutboxConsumerDeadLetters(hostOf({ consumer_dead_letters: letters }), options, app);
}

const consumerLetter = (n: number, partition: number, offset: string, offsetKey = true) => ({
  _id: `id-${String(n).padStart(4, '0')}`,
  consumer: 'billing',
  eventId: `k-${n}`,
  status: 'dead',
  topic: 'shop.Order',
  partition,
  offset,
  // A letter written by the previous version has no sort key.
  ...(offsetKey ? { offsetKey: offset.padStart(20, '0') } : {}),
  value: '{}',
});

describe('dead-letter requeue paging', () => {
  it('replays consumer dead letters in Kafka order: topic, partition, numeric offset', async () => {
    const letters = new FakeCollection([
      consumerLetter(1, 0, '102'),
      consumerLetter(2, 0, '98', false),
      consumerLetter(3, 1, '5'),
      consumerLetter(4, 0, '9223372036854775807'),
      consumerLetter(5, 0, '9223372036854775806', false),
      consumerLetter(6, 0, '1000'),
      consumerLetter(7, 0, '99'),
    ]);
    const dry = await consumerDeadLetters(letters, billingHandler).requeueMany(
      {},
      { dryRun: true, batchSize: 2 },
    );
    expect(dry.failed).toEqual([]);
    expect(dry.eventIds).toEqual(['k-2', 'k-7', 'k-1', 'k-6', 'k-5', 'k-4', 'k-3']);
  });

  it('pages consumer dead letters by a cursor: the query does not grow with the letters skipped', async () => {
    const letters = new FakeCollection(
      Array.from({ length: 300 }, (_, n) => consumerLetter(n, n % 3, String(1000 + n))),
    );
    const result = await consumerDeadLetters(letters).requeueMany({}, { batchSize: 10 });
    expect(result.failed).toHaveLength(300);
    expect(new Set(result.failed.map((f) => f.eventId)).size).toBe(300);
    expect(result.batches).toBe(30);
    expect(letters.largestQuery()).toBeLessThan(1000);
  });

  it('pages relay dead letters by a cursor: the query does not grow with the events that fail', async () => {
    const deadLetters = new FakeCollection(
      Array.from({ length: 300 }, (_, n) => ({
        _id: `id-${n}`,
        outboxId: `o-${String(n).padStart(4, '0')}`,
        eventId: `e-${n}`,
        aggregateType: 'Order',
        aggregateId: `a-${n % 7}`,
        sequence: n,
      })),
    );
    const outbox = new FakeCollection([]);
    const refused = {
      run: async () => {
        throw new Error('the transaction is refused');
      },
      currentSession: () => undefined,
    } as unknown as TransactionRunner;
    const service = new OutboxDeadLetters(
      hostOf({ dead_letters: deadLetters, outbox }),
      refused,
      {} as OutboxEventWriter,
      options,
    );
    const result = await service.requeueMany({}, { batchSize: 10 });
    expect(result.requeued).toBe(0);
    expect(result.failed).toHaveLength(300);
    // Aggregate by aggregate, each in its order, each event once.
    const order = result.failed.map((f) => Number(f.eventId.slice(2)));
    expect(order).toEqual([...order].sort((a, b) => (a % 7) - (b % 7) || a - b));
    expect(deadLetters.largestQuery()).toBeLessThan(1000);
  });
});
