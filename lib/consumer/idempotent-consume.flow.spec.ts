import { of, throwError } from 'rxjs';
import type { ConsumedMessage } from './consumed-message';
import { ConsumerRetryError } from './errors/consumer-retry.error';
import {
  consumeIdempotently,
  isDuplicateKeyError,
  type ConsumeDeps,
  type ConsumeSettings,
  type ConsumerFailureStore,
  type DeadLetter,
  type FailureInfo,
} from './idempotent-consume.flow';

/**
 * A fake database with transactions: writes made inside `run` are staged and become visible
 * only if the function returns; a throw discards them (like an aborted MongoDB transaction).
 */
class FakeDb {
  processed = new Set<string>();
  applied: string[] = [];
  private staged?: Array<() => void>;
  transactions = 0;

  runner = {
    run: async <T>(fn: () => Promise<T>): Promise<T> => {
      this.transactions++;
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
  };

  processedStore = {
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
  failures = new Map<string, FailureInfo[]>();
  deadLetters: DeadLetter[] = [];
  cleared: string[] = [];
  failNextWrite = false;

  async recordFailure(consumer: string, eventId: string, failure: FailureInfo): Promise<number> {
    this.maybeFail();
    const key = `${consumer}|${eventId}`;
    const list = [...(this.failures.get(key) ?? []), failure];
    this.failures.set(key, list);
    return list.length;
  }
  async clearFailures(consumer: string, eventId: string): Promise<void> {
    const key = `${consumer}|${eventId}`;
    if (this.failures.delete(key)) this.cleared.push(key);
  }
  async deadLetter(letter: DeadLetter): Promise<void> {
    this.maybeFail();
    this.deadLetters.push(letter);
  }
  private maybeFail() {
    if (this.failNextWrite) {
      this.failNextWrite = false;
      throw new Error('mongo down');
    }
  }
}

const settings = (over: Partial<ConsumeSettings> = {}): ConsumeSettings => ({
  consumer: 'Billing.onOrder',
  maxFailures: 3,
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
  value,
});
const event = (id: string, payload: object = { orderId: 'o-1' }) =>
  message(JSON.stringify(payload), { ce_id: id });

describe('idempotent consume flow', () => {
  let db: FakeDb;
  let failures: FakeFailureStore;
  let logger: { debug: jest.Mock; warn: jest.Mock; error: jest.Mock };
  let deps: ConsumeDeps;

  beforeEach(() => {
    db = new FakeDb();
    failures = new FakeFailureStore();
    logger = { debug: jest.fn(), warn: jest.fn(), error: jest.fn() };
    deps = { runner: db.runner, processed: db.processedStore, failures, logger };
  });

  const applyOrder = (payload: unknown) => {
    db.write(`applied ${(payload as { orderId: string }).orderId}`);
    return 'handler result';
  };

  it('applies an event once, in the transaction of its processed record', async () => {
    const outcome = await consumeIdempotently(event('e-1'), settings(), applyOrder, deps);
    expect(outcome).toEqual({ kind: 'applied', result: 'handler result' });
    expect(db.applied).toEqual(['applied o-1']);
    expect(db.processed).toEqual(new Set(['Billing.onOrder|e-1']));
  });

  it('skips redeliveries of an applied event without throwing (documented: undefined result)', async () => {
    const handler = jest.fn(applyOrder);
    await consumeIdempotently(event('e-1'), settings(), handler, deps);
    const second = await consumeIdempotently(event('e-1'), settings(), handler, deps);
    const third = await consumeIdempotently(event('e-1'), settings(), handler, deps);
    expect(second).toEqual({ kind: 'duplicate', eventId: 'e-1' });
    expect(third).toEqual({ kind: 'duplicate', eventId: 'e-1' });
    expect(handler).toHaveBeenCalledTimes(1);
    expect(db.applied).toEqual(['applied o-1']);
    expect(logger.debug).toHaveBeenCalledWith(expect.stringContaining('already applied'));
  });

  it('dedupes per consumer: another consumer applies the same event once too', async () => {
    await consumeIdempotently(event('e-1'), settings(), applyOrder, deps);
    const other = await consumeIdempotently(
      event('e-1'),
      settings({ consumer: 'Shipping.onOrder' }),
      applyOrder,
      deps,
    );
    expect(other.kind).toBe('applied');
    expect(db.applied).toEqual(['applied o-1', 'applied o-1']);
    await consumeIdempotently(
      event('e-1'),
      settings({ consumer: 'Shipping.onOrder' }),
      applyOrder,
      deps,
    );
    expect(db.applied).toHaveLength(2);
  });

  it('a failing handler leaves no processed record, counts the failure and asks for redelivery', async () => {
    let calls = 0;
    const flaky = (payload: unknown) => {
      calls++;
      db.write('partial write');
      if (calls === 1) throw new TypeError('downstream not ready');
      return applyOrder(payload);
    };
    const first = consumeIdempotently(event('e-1'), settings(), flaky, deps);
    await expect(first).rejects.toBeInstanceOf(ConsumerRetryError);
    await expect(first).rejects.toMatchObject({
      context: { consumer: 'Billing.onOrder', eventId: 'e-1', failures: 1, maxFailures: 3 },
      cause: expect.any(TypeError),
    });
    expect(db.processed.size).toBe(0);
    expect(db.applied).toEqual([]);
    expect(failures.failures.get('Billing.onOrder|e-1')).toHaveLength(1);

    const retry = await consumeIdempotently(event('e-1'), settings(), flaky, deps);
    expect(retry.kind).toBe('applied');
    expect(db.applied).toEqual(['partial write', 'applied o-1']);
    expect(db.processed.size).toBe(1);
    expect(failures.cleared).toEqual(['Billing.onOrder|e-1']);
  });

  it('dead-letters an event after maxFailures and acknowledges it', async () => {
    const broken = () => {
      throw new Error('always broken');
    };
    for (let i = 1; i < 3; i++) {
      await expect(
        consumeIdempotently(event('e-2'), settings(), broken, deps),
      ).rejects.toBeInstanceOf(ConsumerRetryError);
    }
    const last = await consumeIdempotently(event('e-2'), settings(), broken, deps);
    expect(last).toEqual({ kind: 'dead-lettered', eventId: 'e-2', reason: 'handler-failed' });
    expect(failures.deadLetters).toHaveLength(1);
    expect(failures.deadLetters[0]).toMatchObject({
      consumer: 'Billing.onOrder',
      eventId: 'e-2',
      reason: 'handler-failed',
      value: '{"orderId":"o-1"}',
      error: { name: 'Error', message: 'always broken' },
    });
    expect(db.processed.size).toBe(0);
    expect(logger.error).toHaveBeenCalledWith(expect.stringContaining('dead-lettered Order[1]@'));
  });

  it('also publishes dead letters to the dead-letter topic when one is set', async () => {
    const publish = jest.fn(async () => undefined);
    deps.deadLetterPublisher = { publish };
    const outcome = await consumeIdempotently(
      message('{bad', { ce_id: 'e-3' }),
      settings({ deadLetterTopic: 'orders.dlq' }),
      applyOrder,
      deps,
    );
    expect(outcome.kind).toBe('dead-lettered');
    expect(publish).toHaveBeenCalledWith(
      'orders.dlq',
      expect.objectContaining({ reason: 'invalid-json' }),
    );
  });

  it('asks for redelivery when the dead letter cannot be written', async () => {
    failures.failNextWrite = true;
    await expect(
      consumeIdempotently(message('{bad', { ce_id: 'e-4' }), settings(), applyOrder, deps),
    ).rejects.toBeInstanceOf(ConsumerRetryError);
    const publish = jest.fn(async () => {
      throw new Error('broker down');
    });
    deps.deadLetterPublisher = { publish };
    await expect(
      consumeIdempotently(
        message('{bad', { ce_id: 'e-4' }),
        settings({ deadLetterTopic: 'dlq' }),
        applyOrder,
        deps,
      ),
    ).rejects.toBeInstanceOf(ConsumerRetryError);
  });

  it('asks for redelivery when the failure cannot be recorded', async () => {
    failures.failNextWrite = true;
    const broken = () => {
      throw new Error('nope');
    };
    await expect(consumeIdempotently(event('e-5'), settings(), broken, deps)).rejects.toMatchObject(
      {
        name: 'ConsumerRetryError',
        cause: expect.objectContaining({ message: 'nope' }),
      },
    );
  });

  it.each([
    ['no event id', message('{"orderId":"o-1"}'), 'missing-event-id', null],
    ['an unusable event id', message('{}', { ce_id: '' }), 'invalid-event-id', null],
    ['invalid JSON', message('{"orderId":', { ce_id: 'e-6' }), 'invalid-json', 'e-6'],
    ['an empty value', message(null, { ce_id: 'e-7' }), 'empty-value', 'e-7'],
    [
      'a __proto__ key',
      message('{"__proto__":{"polluted":true}}', { ce_id: 'e-8' }),
      'forbidden-key',
      'e-8',
    ],
    [
      'a constructor key Nest already parsed',
      message(JSON.parse('{"constructor":{"prototype":{"polluted":true}}}'), { ce_id: 'e-9' }),
      'forbidden-key',
      'e-9',
    ],
  ])(
    'dead-letters a message with %s, acks it and never runs the handler',
    async (_n, msg, reason, id) => {
      const handler = jest.fn();
      const outcome = await consumeIdempotently(msg, settings(), handler, deps);
      expect(outcome).toEqual({ kind: 'dead-lettered', eventId: id, reason });
      expect(handler).not.toHaveBeenCalled();
      expect(db.transactions).toBe(0);
      expect(failures.deadLetters).toEqual([expect.objectContaining({ reason, eventId: id })]);
      expect(logger.warn).toHaveBeenCalledTimes(1);
      expect(logger.warn.mock.calls[0][0]).toMatch(
        new RegExp(`Billing.onOrder: dead-lettered Order\\[1\\]@\\d+.*${reason}`),
      );
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );

  it('uses the event id fallback when the header is missing', async () => {
    const outcome = await consumeIdempotently(
      message('{"orderId":"o-1","id":"p-1"}'),
      settings({ eventIdFallback: (_m, p) => (p as { id: string }).id }),
      applyOrder,
      deps,
    );
    expect(outcome.kind).toBe('applied');
    expect(db.processed).toEqual(new Set(['Billing.onOrder|p-1']));
  });

  it('dead-letters payloads the validate hook rejects', async () => {
    const outcome = await consumeIdempotently(
      event('e-10', { orderId: 42 }),
      settings({
        validate: (p) =>
          typeof (p as { orderId: unknown }).orderId === 'string' || 'orderId must be a string',
      }),
      applyOrder,
      deps,
    );
    expect(outcome).toEqual({ kind: 'dead-lettered', eventId: 'e-10', reason: 'invalid-payload' });
    expect(failures.deadLetters[0].detail).toBe('orderId must be a string');
  });

  it('awaits observables returned by the handler inside the transaction', async () => {
    const ok = await consumeIdempotently(event('e-11'), settings(), () => of(1, 2, 3), deps);
    expect(ok).toEqual({ kind: 'applied', result: 3 });
    await expect(
      consumeIdempotently(event('e-12'), settings(), () => throwError(() => new Error('x')), deps),
    ).rejects.toBeInstanceOf(ConsumerRetryError);
    expect(db.processed.has('Billing.onOrder|e-12')).toBe(false);
  });

  it('treats a duplicate key from the handler own writes as a failure, not as "already applied"', async () => {
    const handler = () => {
      throw Object.assign(new Error('E11000 on orders'), { code: 11000 });
    };
    await expect(
      consumeIdempotently(event('e-13'), settings(), handler, deps),
    ).rejects.toBeInstanceOf(ConsumerRetryError);
  });

  it('recognizes duplicate-key errors', () => {
    expect(isDuplicateKeyError({ code: 11000 })).toBe(true);
    expect(isDuplicateKeyError({ writeErrors: [{ code: 11000 }] })).toBe(true);
    expect(isDuplicateKeyError(new Error('x'))).toBe(false);
    expect(isDuplicateKeyError(null)).toBe(false);
  });
});
