import type { ClientSession } from 'mongoose';
import type { ConsumedMessage } from '../input/consumed-message';
import type { ConsumerFailureStore } from '../consume.ports';
import { OutboxConsumerMetrics } from '../flow/consumer.metrics';
import { ConsumerSink } from '../flow/consumer-sink';
import type { ConsumeDeps, ConsumeSettings } from '../flow/idempotent-consume.flow';
import { applyBatch } from './batch-apply.flow';
import { consumeInBatch } from './batch-consume.flow';
import { BatchAbortedError, currentBatch } from './consume-batch.scope';

/** A database whose transactions stage writes; a nested `run` joins the running one. */
class FakeDb {
  processed = new Set<string>();
  applied: string[] = [];
  commits = 0;
  failCommit?: Error;
  retryBody = false;
  private staged?: Array<() => void>;
  readonly session = { id: 'session' } as unknown as ClientSession;

  runner = {
    run: async <T>(fn: () => Promise<T>): Promise<T> => {
      if (this.staged) return fn();
      for (let attempt = 1; ; attempt++) {
        const staged: Array<() => void> = [];
        this.staged = staged;
        try {
          const result = await fn();
          if (this.retryBody && attempt === 1) continue; // as withTransaction after a transient error
          if (this.failCommit) throw this.failCommit;
          staged.forEach((apply) => apply());
          this.commits++;
          return result;
        } finally {
          this.staged = undefined;
        }
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
    wasApplied: async (consumer: string, eventId: string) =>
      this.processed.has(`${consumer}|${eventId}`),
    insert: async (consumer: string, eventId: string): Promise<void> => {
      const key = `${consumer}|${eventId}`;
      if (!this.staged) throw new Error('insert outside a transaction');
      if (this.processed.has(key))
        throw Object.assign(new Error('E11000 duplicate key'), { code: 11000 });
      this.staged.push(() => this.processed.add(key));
    },
  };

  write(entry: string): void {
    if (!this.staged) throw new Error('handler write outside a transaction');
    this.staged.push(() => this.applied.push(entry));
  }
}

const failures: ConsumerFailureStore = {
  recordFailure: jest.fn(async () => 1),
  clearFailures: jest.fn(async () => undefined),
  deadLetter: jest.fn(async () => undefined),
};

const settings: ConsumeSettings = {
  handler: 'Billing.onOrder',
  consumer: 'billing',
  maxFailures: 3,
  retryBackoff: { initialMs: 10, maxMs: 15 },
  handlerTimeoutMs: 1000,
  eventIdHeader: 'ce_id',
};

const message = (id: string, value = '{"orderId":"o-1"}'): ConsumedMessage => ({
  topic: 'Order',
  partition: 0,
  offset: id.slice(2),
  key: 'o-1',
  headers: { ce_id: id },
  decodedHeaders: [],
  value,
  rawValue: false,
});

describe('a batch of one consumer applied in one transaction', () => {
  let db: FakeDb;
  let deps: ConsumeDeps;
  let metrics: OutboxConsumerMetrics;
  const logger = { debug: jest.fn(), log: jest.fn(), warn: jest.fn(), error: jest.fn() };

  beforeEach(() => {
    jest.clearAllMocks();
    db = new FakeDb();
    metrics = new OutboxConsumerMetrics();
    deps = {
      runner: db.runner,
      processed: db.processedStore,
      sink: new ConsumerSink(failures, logger),
      metrics,
      logger,
    };
  });

  /** Delivers `ids` in order the way the transport does inside a batch. */
  const deliverAll =
    (ids: string[], handler: (id: string) => unknown = (id) => db.write(id)) =>
    async () => {
      for (const id of ids) {
        const batch = currentBatch()!;
        await consumeInBatch(
          { message: message(id), heartbeat: async () => undefined },
          settings,
          () => handler(id),
          deps,
          batch,
        ).catch(() => undefined); // the pipeline may swallow it: the batch remembers
        if (batch.failed) return;
      }
    };

  it('commits every dedupe record and every write in one commit, then counts them', async () => {
    const result = await applyBatch('billing', 1000, deps, [], deliverAll(['e-1', 'e-2', 'e-3']));
    expect(result).toMatchObject({ committed: true });
    expect(db.commits).toBe(1);
    expect(db.applied).toEqual(['e-1', 'e-2', 'e-3']);
    expect([...db.processed]).toEqual(['billing|e-1', 'billing|e-2', 'billing|e-3']);
    expect(metrics.snapshot()).toMatchObject({ applied: 3, batches: 1, failures: 0 });
  });

  it.each([0, 1, 2])(
    'a handler failing at position %i aborts the whole batch, counting nothing',
    async (position) => {
      const ids = ['e-1', 'e-2', 'e-3'];
      const result = await applyBatch(
        'billing',
        1000,
        deps,
        [],
        deliverAll(ids, (id) => {
          db.write(id);
          if (id === ids[position]) throw new Error('handler broke');
        }),
      );
      expect(result).toMatchObject({ committed: false });
      expect((result as { error: BatchAbortedError }).error.message).toMatch(/handler broke/);
      expect(db.applied).toEqual([]);
      expect(db.processed.size).toBe(0);
      expect(metrics.snapshot()).toMatchObject({ applied: 0, failures: 0, batchFallbacks: 1 });
      expect(failures.recordFailure).not.toHaveBeenCalled();
    },
  );

  it('an event already applied aborts the batch (its duplicate key aborts the transaction)', async () => {
    db.processed.add('billing|e-2');
    const result = await applyBatch('billing', 1000, deps, [], deliverAll(['e-1', 'e-2']));
    expect(result).toMatchObject({ committed: false });
    expect(db.applied).toEqual([]);
  });

  it('events known to be applied (ids read ahead) send it one at a time before any handler runs', async () => {
    db.processed.add('billing|e-2');
    const handler = jest.fn((id: string) => db.write(id));
    const result = await applyBatch(
      'billing',
      1000,
      deps,
      ['e-1', 'e-2'],
      deliverAll(['e-1', 'e-2'], handler),
    );
    expect(result).toMatchObject({ committed: false });
    expect(handler).not.toHaveBeenCalled();
  });

  it('the same event twice in one batch aborts it (a relay duplicate)', async () => {
    const result = await applyBatch('billing', 1000, deps, [], deliverAll(['e-1', 'e-1']));
    expect(result).toMatchObject({ committed: false });
    expect(db.applied).toEqual([]);
  });

  it('writes every dedupe record in one command at the end', async () => {
    const insertMany = jest.spyOn(db.processedStore, 'insertMany');
    const insert = jest.spyOn(db.processedStore, 'insert');
    await applyBatch('billing', 1000, deps, [], deliverAll(['e-1', 'e-2', 'e-3']));
    expect(insertMany).toHaveBeenCalledTimes(1);
    expect(insertMany).toHaveBeenCalledWith('billing', ['e-1', 'e-2', 'e-3']);
    expect(insert.mock.calls.length).toBe(3); // the fake's insertMany inserts one by one
  });

  it('a message with bad input aborts the batch before any dead letter is written', async () => {
    const result = await applyBatch('billing', 1000, deps, [], async () => {
      await consumeInBatch(
        { message: message('e-1', '{"bad'), heartbeat: async () => undefined },
        settings,
        () => db.write('x'),
        deps,
        currentBatch()!,
      ).catch(() => undefined);
    });
    expect(result).toMatchObject({ committed: false });
    expect(failures.deadLetter).not.toHaveBeenCalled();
  });

  it('the budget is shared: a handler running past what is left of it aborts the batch', async () => {
    const result = await applyBatch(
      'billing',
      150,
      deps,
      [],
      deliverAll(['e-1', 'e-2'], (id) =>
        id === 'e-2' ? new Promise((r) => setTimeout(r, 400)) : db.write(id),
      ),
    );
    expect(result).toMatchObject({ committed: false });
    expect((result as { error: Error }).error.message).toMatch(/e-2 failed.*handlerTimeoutMs/);
    expect(db.applied).toEqual([]);
  });

  it('a body the transaction would retry (transient error) falls back instead of running twice', async () => {
    db.retryBody = true;
    const handler = jest.fn((id: string) => db.write(id));
    const result = await applyBatch('billing', 1000, deps, [], deliverAll(['e-1'], handler));
    expect(result).toMatchObject({ committed: false });
    expect(handler).toHaveBeenCalledTimes(1);
    expect(db.applied).toEqual([]);
  });

  it('a failed commit falls back; nothing is counted', async () => {
    db.failCommit = Object.assign(new Error('WriteConflict'), { code: 112 });
    const result = await applyBatch('billing', 1000, deps, [], deliverAll(['e-1', 'e-2']));
    expect(result).toMatchObject({ committed: false });
    expect(metrics.snapshot()).toMatchObject({ applied: 0, batchFallbacks: 1 });
  });

  it('an event of another consumer cannot join it', async () => {
    const result = await applyBatch('billing', 1000, deps, [], async () => {
      await consumeInBatch(
        { message: message('e-1'), heartbeat: async () => undefined },
        { ...settings, consumer: 'shipping' },
        () => db.write('x'),
        deps,
        currentBatch()!,
      ).catch(() => undefined);
    });
    expect(result).toMatchObject({ committed: false });
  });
});
