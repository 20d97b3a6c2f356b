import type { ClientSession } from 'mongoose';
import { of } from 'rxjs';
import type { ConsumedMessage } from '../input/consumed-message';
import type { ConsumerFailureStore, DeadLetter, DeadLetterPublisher } from '../consume.ports';
import { OutboxConsumerMetrics } from './consumer.metrics';
import { ConsumerSink } from './consumer-sink';
import { HandlerTimeoutError, UnrecoverableEventError } from '../consumer.errors';
import { currentHandlerScope } from './handler-scope';
import {
  consumeIdempotently,
  consumeRejected,
  RedeliveryRequired,
  type ConsumeDeps,
  type ConsumeSettings,
  type Delivery,
} from './idempotent-consume.flow';

/**
 * A fake database with transactions: writes made inside `run` are staged and become visible
 * only if the function returns; a throw discards them (like an aborted MongoDB transaction).
 */
class FakeDb {
  processed = new Set<string>();
  applied: string[] = [];
  private staged?: Array<() => void>;
  readonly session = { id: 'session' } as unknown as ClientSession;

  runner = {
    run: async <T>(fn: () => Promise<T>): Promise<T> => {
      const staged: Array<() => void> = [];
      this.staged = staged;
      try {
        const result = await fn();
        staged.forEach((apply) => apply());
        return result;
      } finally {
        this.staged = undefined;
      }
    },
    currentSession: () => (this.staged ? this.session : undefined),
  };

  processedStore = {
    appliedAmong: async (consumer: string, eventIds: readonly string[]) =>
      eventIds.filter((eventId) => this.processed.has(`${consumer}|${eventId}`)),
    insertMany: async (consumer: string, eventIds: readonly string[]): Promise<void> => {
      for (const eventId of eventIds) await this.processedStore.insert(consumer, eventId);
    },
    wasApplied: async (consumer: string, eventId: string): Promise<boolean> =>
      this.processed.has(`${consumer}|${eventId}`),
    insert: async (consumer: string, eventId: string): Promise<void> => {
      const key = `${consumer}|${eventId}`;
      if (!this.staged) throw new Error('insert outside a transaction');
      if (this.processed.has(key))
        throw Object.assign(new Error('E11000 duplicate key'), { code: 11000 });
      this.staged.push(() => this.processed.add(key));
    },
  };

  /** A write of the handler, in the running transaction. */
  write(entry: string): void {
    if (!this.staged) throw new Error('handler write outside a transaction');
    this.staged.push(() => this.applied.push(entry));
  }
}

class FakeFailureStore implements ConsumerFailureStore {
  failures = new Map<string, string[]>();
  deadLetters: DeadLetter[] = [];
  cleared: string[] = [];
  /** Writes refused until this many were attempted. */
  refuse = 0;

  async recordFailure(
    consumer: string,
    eventId: string,
    failure: { error: string },
  ): Promise<number> {
    this.maybeRefuse();
    const key = `${consumer}|${eventId}`;
    const list = [...(this.failures.get(key) ?? []), failure.error];
    this.failures.set(key, list);
    return list.length;
  }
  async clearFailures(consumer: string, eventId: string): Promise<void> {
    if (this.failures.delete(`${consumer}|${eventId}`)) this.cleared.push(`${consumer}|${eventId}`);
  }
  async deadLetter(letter: DeadLetter): Promise<void> {
    this.maybeRefuse();
    this.deadLetters.push(
      structuredClone({ ...letter, message: undefined }) as unknown as DeadLetter,
    );
  }
  private maybeRefuse() {
    if (this.refuse > 0) {
      this.refuse--;
      throw new Error('mongo down');
    }
  }
}

const settings = (over: Partial<ConsumeSettings> = {}): ConsumeSettings => ({
  handler: 'Billing.onOrder',
  consumer: 'billing',
  maxFailures: 3,
  retryBackoff: { initialMs: 10, maxMs: 15 },
  handlerTimeoutMs: 1000,
  eventIdHeader: 'ce_id',
  ...over,
});

let offset = 0;
const message = (value: unknown, headers: Record<string, string> = {}): ConsumedMessage => ({
  topic: 'Order',
  partition: 1,
  offset: String(offset++),
  key: 'o-1',
  headers,
  decodedHeaders: [],
  value,
  rawValue: false,
});
const event = (id: string, payload: object = { orderId: 'o-1' }) =>
  message(JSON.stringify(payload), { ce_id: id });

describe('idempotent consume flow', () => {
  let db: FakeDb;
  let store: FakeFailureStore;
  let logger: { debug: jest.Mock; log: jest.Mock; warn: jest.Mock; error: jest.Mock };
  let metrics: OutboxConsumerMetrics;
  let delays: number[];
  let deps: ConsumeDeps;
  let heartbeat: jest.Mock;
  const deliver = (m: ConsumedMessage): Delivery => ({ message: m, heartbeat });

  beforeEach(() => {
    db = new FakeDb();
    store = new FakeFailureStore();
    logger = { debug: jest.fn(), log: jest.fn(), warn: jest.fn(), error: jest.fn() };
    metrics = new OutboxConsumerMetrics();
    delays = [];
    heartbeat = jest.fn(async () => undefined);
    deps = {
      runner: db.runner,
      processed: db.processedStore,
      sink: new ConsumerSink(store, logger),
      metrics,
      logger,
      sleep: async (ms) => {
        delays.push(ms);
      },
    };
  });

  const applyOrder = (payload: unknown) => {
    db.write(`applied ${(payload as { orderId: string }).orderId}`);
    return 'handler result';
  };

  it('applies an event once; a redelivery is skipped without calling the handler', async () => {
    const handler = jest.fn(applyOrder);
    await expect(
      consumeIdempotently(deliver(event('e-1')), settings(), handler, deps),
    ).resolves.toEqual({
      kind: 'applied',
      result: 'handler result',
    });
    await expect(
      consumeIdempotently(deliver(event('e-1')), settings(), handler, deps),
    ).resolves.toEqual({
      kind: 'duplicate',
      eventId: 'e-1',
    });
    expect(handler).toHaveBeenCalledTimes(1);
    expect(db.applied).toEqual(['applied o-1']);
    expect(metrics.snapshot()).toMatchObject({ applied: 1, duplicates: 1, failures: 0 });
  });

  it('hands over a null-prototype payload and settles an observable result', async () => {
    let seen: unknown;
    const outcome = await consumeIdempotently(
      deliver(event('e-2', { constructor: 'x' })),
      settings(),
      (payload) => {
        seen = payload;
        return of(1, 2, 3);
      },
      deps,
    );
    expect(outcome).toEqual({ kind: 'applied', result: 3 });
    expect(Object.getPrototypeOf(seen)).toBeNull();
  });

  it('retries a failing handler in the same delivery, with backoff and heartbeats; failed attempts leave nothing', async () => {
    let calls = 0;
    const outcome = await consumeIdempotently(
      deliver(event('e-3')),
      settings(),
      (payload) => {
        calls++;
        applyOrder(payload);
        if (calls < 3) throw new Error(`attempt ${calls} fails`);
      },
      deps,
    );
    expect(outcome.kind).toBe('applied');
    expect(calls).toBe(3);
    expect(db.applied).toEqual(['applied o-1']);
    expect(delays).toEqual([10, 15]);
    expect(heartbeat).toHaveBeenCalledTimes(4);
    expect(store.cleared).toEqual(['billing|e-3']);
    expect(metrics.snapshot()).toMatchObject({ applied: 1, failures: 2 });
  });

  it('dead-letters after maxFailures, within one delivery, and acknowledges', async () => {
    const outcome = await consumeIdempotently(
      deliver(event('e-4')),
      settings(),
      () => {
        throw new Error('cannot apply');
      },
      deps,
    );
    expect(outcome).toEqual({ kind: 'dead-lettered', eventId: 'e-4', reason: 'max-failures' });
    expect(store.failures.get('billing|e-4')).toEqual(Array(3).fill('Error: cannot apply'));
    expect(store.deadLetters).toMatchObject([
      { eventId: 'e-4', reason: 'max-failures', attempts: 3, lastError: 'Error: cannot apply' },
    ]);
    expect(db.processed.size).toBe(0);
    expect(metrics.snapshot()).toMatchObject({ failures: 3, deadLettered: 1 });
  });

  it('an UnrecoverableEventError dead-letters at once', async () => {
    const handler = jest.fn(() => {
      throw new UnrecoverableEventError('order is gone');
    });
    await expect(
      consumeIdempotently(deliver(event('e-5')), settings(), handler, deps),
    ).resolves.toEqual({
      kind: 'dead-lettered',
      eventId: 'e-5',
      reason: 'unrecoverable',
    });
    expect(handler).toHaveBeenCalledTimes(1);
    expect(store.deadLetters[0]).toMatchObject({
      attempts: 1,
      lastError: 'UnrecoverableEventError: order is gone',
    });
  });

  // Defect 5: a handler that never returned held its partition forever.
  it('times out a handler that never returns: aborted, counted, retried; its signal tells it', async () => {
    const signals: AbortSignal[] = [];
    let calls = 0;
    const outcome = await consumeIdempotently(
      deliver(event('e-6')),
      settings({ handlerTimeoutMs: 50 }),
      () => {
        calls++;
        signals.push(currentHandlerScope().signal);
        if (calls === 1) return new Promise(() => undefined); // never settles
        return 'second attempt';
      },
      deps,
    );
    expect(outcome).toEqual({ kind: 'applied', result: 'second attempt' });
    expect(signals[0].aborted).toBe(true);
    expect(signals[0].reason).toBeInstanceOf(HandlerTimeoutError);
    expect(signals[1].aborted).toBe(false);
    expect(store.failures.size).toBe(0); // cleared after the success
    expect(metrics.snapshot()).toMatchObject({ failures: 1, timeouts: 1, applied: 1 });
    expect(metrics.snapshot().handlerDuration.maxMs).toBeGreaterThanOrEqual(45);
  });

  it('gives the handler its scope: consumer, event id, attempt, session', async () => {
    const scopes: Array<Record<string, unknown>> = [];
    await consumeIdempotently(
      deliver(event('e-7')),
      settings(),
      () => {
        const { consumer, eventId, attempt, session } = currentHandlerScope();
        scopes.push({ consumer, eventId, attempt, session });
        if (scopes.length === 1) throw new Error('again');
      },
      deps,
    );
    expect(scopes).toEqual([
      { consumer: 'billing', eventId: 'e-7', attempt: 1, session: db.session },
      { consumer: 'billing', eventId: 'e-7', attempt: 2, session: db.session },
    ]);
  });

  it.each([
    ['no event id', message('{"orderId":"o"}'), null, 'missing-event-id'],
    ['bad JSON', message('{oops', { ce_id: 'b-2' }), 'b-2', 'invalid-json'],
    [
      'a "__proto__" key',
      message('{"__proto__":{"x":1}}', { ce_id: 'b-3' }),
      'b-3',
      'forbidden-key',
    ],
    ['a scalar payload', message('42', { ce_id: 'b-4' }), 'b-4', 'invalid-payload'],
  ])('dead-letters %s without calling the handler', async (_what, m, eventId, reason) => {
    const handler = jest.fn();
    await expect(consumeIdempotently(deliver(m), settings(), handler, deps)).resolves.toEqual({
      kind: 'dead-lettered',
      eventId,
      reason,
    });
    expect(handler).not.toHaveBeenCalled();
    expect(store.deadLetters[0]).toMatchObject({ eventId, reason, attempts: 0 });
  });

  // Issue 18, defect 5: a dto whose class-transformer or class-validator step threw escaped the
  // flow uncounted, and the message was delivered again forever, holding its partition.
  it('dead-letters a message whose dto step throws, counts it, and goes on with the next one', async () => {
    const handler = jest.fn(applyOrder);
    const throwingDto = settings({ dto: class Order {} });
    deps.classValidation = () => ({
      plainToInstance: () => {
        throw new TypeError("Cannot read properties of undefined (reading 'name')");
      },
      validate: async () => [],
      hasConstraints: () => true,
    });
    await expect(
      consumeIdempotently(deliver(event('t-1')), throwingDto, handler, deps),
    ).resolves.toEqual({ kind: 'dead-lettered', eventId: 't-1', reason: 'invalid-payload' });
    expect(store.deadLetters[0]).toMatchObject({
      eventId: 't-1',
      attempts: 0,
      lastError: expect.stringMatching(/^dto Order threw: TypeError: Cannot read properties/),
    });
    expect(handler).not.toHaveBeenCalled();
    expect(metrics.snapshot()).toMatchObject({ deadLettered: 1 });

    deps.classValidation = () => ({
      plainToInstance: (_cls, plain) => plain,
      validate: async () => {
        throw new RangeError('constraint blew up');
      },
      hasConstraints: () => true,
    });
    await expect(
      consumeIdempotently(deliver(event('t-2')), throwingDto, handler, deps),
    ).resolves.toMatchObject({ kind: 'dead-lettered', reason: 'invalid-payload' });
    expect(store.deadLetters[1].lastError).toMatch(/^dto Order threw: RangeError: constraint/);
    await expect(
      consumeIdempotently(deliver(event('t-3')), settings(), handler, deps),
    ).resolves.toMatchObject({ kind: 'applied' });
    expect(metrics.snapshot()).toMatchObject({ deadLettered: 2, applied: 1 });
  });

  it('a rebalance between attempts ends the delivery unacknowledged, without a pause', async () => {
    heartbeat.mockRejectedValueOnce(new Error('REBALANCE_IN_PROGRESS'));
    const error = await consumeIdempotently(
      deliver(event('e-8')),
      settings(),
      () => {
        throw new Error('fails');
      },
      deps,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedeliveryRequired);
    expect((error as RedeliveryRequired).pauseMs).toBeUndefined();
    expect(store.failures.get('billing|e-8')).toHaveLength(1);
  });

  // Defect 1: a store that refused writes made every delivery throw, forever, with no pause.
  it('a failure store that refuses writes pauses the partition with growing backoff, logged once per state change', async () => {
    store.refuse = 2;
    const failing = () => {
      throw new Error('fails');
    };
    const first = await consumeIdempotently(deliver(event('e-9')), settings(), failing, deps).catch(
      (e) => e,
    );
    const second = await consumeIdempotently(
      deliver(event('e-9')),
      settings(),
      failing,
      deps,
    ).catch((e) => e);
    expect(first).toBeInstanceOf(RedeliveryRequired);
    expect([first.pauseMs, second.pauseMs]).toEqual([1000, 2000]);
    expect(logger.error).toHaveBeenCalledTimes(1);
    expect(logger.error.mock.calls[0][0]).toMatch(/refuses the consumers' writes/);
    // The store is back: the event runs to its end, and the recovery is logged once.
    await expect(
      consumeIdempotently(deliver(event('e-9')), settings(), failing, deps),
    ).resolves.toMatchObject({
      kind: 'dead-lettered',
    });
    expect(logger.log).toHaveBeenCalledTimes(1);
    expect(logger.log.mock.calls[0][0]).toMatch(/accepts the consumers' writes again/);
  });

  it('a MongoDB outage during the attempt is not counted: the partition is paused, the message comes back', async () => {
    const outage = Object.assign(new Error('connection 3 to 127.0.0.1:27017 closed'), {
      name: 'MongoNetworkError',
    });
    const transient = Object.assign(new Error('no primary'), {
      errorLabels: ['TransientTransactionError'],
    });
    const failing = jest
      .fn()
      .mockRejectedValueOnce(outage)
      .mockRejectedValueOnce(transient)
      .mockResolvedValue('ok');
    const m = event('e-11');
    const first = await consumeIdempotently(deliver(m), settings(), failing, deps).catch((e) => e);
    const second = await consumeIdempotently(deliver(m), settings(), failing, deps).catch((e) => e);
    expect([first.pauseMs, second.pauseMs]).toEqual([1000, 2000]);
    await expect(consumeIdempotently(deliver(m), settings(), failing, deps)).resolves.toMatchObject(
      { kind: 'applied' },
    );
    expect(store.failures.size).toBe(0);
    expect(metrics.snapshot()).toMatchObject({ failures: 0, applied: 1 });
    expect(logger.error).toHaveBeenCalledTimes(1);
    expect(logger.log).toHaveBeenCalledTimes(1);
    expect(logger.log.mock.calls[0][0]).toMatch(/accepts the consumers' writes again/);
  });

  it('a dead letter that could not be stored is written first when its message comes back', async () => {
    const m = event('e-10');
    const handler = jest.fn(() => {
      throw new UnrecoverableEventError('no');
    });
    store.refuse = 0;
    const original = store.deadLetter.bind(store);
    store.deadLetter = jest
      .fn()
      .mockRejectedValueOnce(new Error('mongo down'))
      .mockImplementation(original);
    await expect(consumeIdempotently(deliver(m), settings(), handler, deps)).rejects.toBeInstanceOf(
      RedeliveryRequired,
    );
    await expect(consumeIdempotently(deliver(m), settings(), handler, deps)).resolves.toMatchObject(
      {
        kind: 'dead-lettered',
        reason: 'unrecoverable',
      },
    );
    expect(handler).toHaveBeenCalledTimes(1);
  });

  // Defect 1: an unreachable dead-letter topic made every delivery throw, forever.
  it('an unreachable dead-letter topic: stored as unpublished, not retried for a while, logged once', async () => {
    const publisher: DeadLetterPublisher = {
      publish: jest.fn(async () => Promise.reject(new Error('UNKNOWN_TOPIC_OR_PARTITION'))),
    };
    deps.publisher = publisher;
    const dlq = settings({ deadLetterTopic: 'orders.dlq' });
    await consumeIdempotently(deliver(message('{oops', { ce_id: 'd-1' })), dlq, jest.fn(), deps);
    await consumeIdempotently(deliver(message('{oops', { ce_id: 'd-2' })), dlq, jest.fn(), deps);
    expect(publisher.publish).toHaveBeenCalledTimes(1);
    expect(store.deadLetters.map((d) => d.topicCopy)).toEqual([
      { topic: 'orders.dlq', published: false, error: 'Error: UNKNOWN_TOPIC_OR_PARTITION' },
      {
        topic: 'orders.dlq',
        published: false,
        error: expect.stringMatching(/^not tried: unreachable since/),
      },
    ]);
    expect(
      logger.error.mock.calls.filter(([line]) =>
        /dead-letter topic orders\.dlq cannot be reached/.test(line),
      ),
    ).toHaveLength(1);
  });

  describe('rejections before the handler ran (guards, pipes, interceptors)', () => {
    // Defect 1: such a rejection used to be redelivered forever, never counted.
    it('are counted; below maxFailures the message comes back after a paused backoff, then it is dead-lettered', async () => {
      const m = event('r-1');
      const rejection = new Error('rejected by a pipe');
      const first = await consumeRejected(deliver(m), settings(), rejection, deps).catch((e) => e);
      const second = await consumeRejected(deliver(m), settings(), rejection, deps).catch((e) => e);
      expect([first.pauseMs, second.pauseMs]).toEqual([10, 15]);
      await expect(consumeRejected(deliver(m), settings(), rejection, deps)).resolves.toEqual({
        kind: 'dead-lettered',
        eventId: 'r-1',
        reason: 'max-failures',
      });
      expect(store.deadLetters[0]).toMatchObject({
        attempts: 3,
        lastError: 'Error: rejected by a pipe',
      });
      expect(metrics.snapshot()).toMatchObject({ failures: 3, deadLettered: 1 });
    });

    it('a redelivery of an event already applied is a duplicate, not a failure, whatever rejects it', async () => {
      const m = event('r-4');
      await expect(consumeIdempotently(deliver(m), settings(), applyOrder, deps)).resolves.toEqual({
        kind: 'applied',
        result: 'handler result',
      });
      // A pipe made stricter by a deploy rejects the same message delivered again.
      for (let i = 0; i < 3; i++) {
        await expect(
          consumeRejected(deliver(m), settings(), new Error('stricter pipe'), deps),
        ).resolves.toEqual({ kind: 'duplicate', eventId: 'r-4' });
      }
      expect(store.failures.size).toBe(0);
      expect(store.deadLetters).toHaveLength(0);
      expect(metrics.snapshot()).toMatchObject({ applied: 1, duplicates: 3, failures: 0 });
    });

    it('an UnrecoverableEventError from a pipe dead-letters at once', async () => {
      await expect(
        consumeRejected(
          deliver(event('r-2')),
          settings(),
          new UnrecoverableEventError('bad'),
          deps,
        ),
      ).resolves.toMatchObject({ kind: 'dead-lettered', reason: 'unrecoverable' });
    });

    it('a message that is bad anyway is dead-lettered for what is wrong with it', async () => {
      await expect(
        consumeRejected(
          deliver(message('{oops', { ce_id: 'r-3' })),
          settings(),
          new Error('pipe'),
          deps,
        ),
      ).resolves.toMatchObject({ kind: 'dead-lettered', reason: 'invalid-json' });
    });
  });
});
