import type { EachBatchPayload, EachMessagePayload, KafkaMessage } from 'kafkajs';
import type { BatchResult } from '../consumer/batch/batch-apply.flow';
import { currentBatch, runInBatch, ConsumeBatch } from '../consumer/batch/consume-batch.scope';
import type { IdempotentBatchTarget } from '../consumer/nest/idempotent-batch.target';
import type { IdempotentHandlerSettings } from '../consumer/idempotent-handler.options';
import { consumeFetchedBatch } from './fetched-batch.consumer';

const message = (offset: number, type = 'OrderPlaced'): KafkaMessage =>
  ({
    offset: String(offset),
    key: Buffer.from('o-1'),
    value: Buffer.from('{}'),
    headers: { ce_type: type },
    timestamp: '0',
    attributes: 0,
  }) as KafkaMessage;

/** A runtime whose batches commit unless `failAt` names an offset that fails inside one. */
function fakeRuntime(log: string[], failAt?: string) {
  return {
    batchLimits: { maxEvents: 3, maxBytes: 1_000_000 },
    consume: jest.fn(),
    consumeRejected: jest.fn(),
    applyBatch: jest.fn(
      async (
        settings: readonly IdempotentHandlerSettings[],
        _headers: unknown,
        deliverAll: () => Promise<void>,
      ): Promise<BatchResult> => {
        const batch = new ConsumeBatch('billing', {}, Date.now() + 1000);
        log.push(`begin ${settings.length}`);
        await runInBatch(batch, deliverAll).catch(() => undefined);
        if (batch.failed) {
          log.push('abort');
          return { committed: false, error: batch.failed };
        }
        log.push('commit');
        return { committed: true, entries: [] };
      },
    ),
    failAt,
  };
}

describe('consumeFetchedBatch (kafkajs eachBatch of OutboxKafkaServer)', () => {
  const settings = { consumer: 'billing', handler: 'Billing.on' } as IdempotentHandlerSettings;

  function run(
    messages: KafkaMessage[],
    opts: { failAt?: string; targetless?: string[]; throwAt?: string } = {},
  ) {
    const log: string[] = [];
    const runtime = fakeRuntime(log, opts.failAt);
    const target = { runtime, settings } as unknown as IdempotentBatchTarget;
    const payload = {
      batch: { topic: 'Order', partition: 0, messages },
      resolveOffset: (offset: string) => log.push(`resolve ${offset}`),
      heartbeat: async () => undefined,
      commitOffsetsIfNecessary: async () => {
        log.push('commit offsets');
      },
      isRunning: () => true,
      isStale: () => false,
      pause: () => () => undefined,
    } as unknown as EachBatchPayload;
    const done = consumeFetchedBatch(payload, {
      targetOf: async (m) => (opts.targetless?.includes(m.offset) ? undefined : target),
      handle: async ({ message: m }: EachMessagePayload) => {
        const batch = currentBatch();
        log.push(`${batch ? 'in batch' : 'alone'} ${m.offset}`);
        if (batch && m.offset === opts.failAt) batch.fail('handler threw');
        if (!batch && m.offset === opts.throwAt) throw new Error('redeliver');
      },
      isPaused: () => false,
      logger: { debug: () => undefined },
    });
    return { log, done };
  }

  it('applies consecutive events of one consumer as one batch, then resolves and commits their offsets', async () => {
    const { log, done } = run([0, 1, 2, 3].map((o) => message(o)));
    await done;
    expect(log).toEqual([
      'begin 3',
      'in batch 0',
      'in batch 1',
      'in batch 2',
      'commit',
      'resolve 0',
      'resolve 1',
      'resolve 2',
      'commit offsets',
      'alone 3',
      'resolve 3',
      'commit offsets',
    ]);
  });

  it('a failure inside a batch stops it and delivers the same events again one at a time', async () => {
    const { log, done } = run(
      [0, 1, 2].map((o) => message(o)),
      { failAt: '1' },
    );
    await done;
    expect(log).toEqual([
      'begin 3',
      'in batch 0',
      'in batch 1',
      'abort',
      'alone 0',
      'resolve 0',
      'commit offsets',
      'alone 1',
      'resolve 1',
      'commit offsets',
      'alone 2',
      'resolve 2',
      'commit offsets',
    ]);
  });

  it('a message without a batch target cuts the run; a throw on its own ends the fetch unresolved', async () => {
    const { log, done } = run(
      [0, 1, 2, 3].map((o) => message(o)),
      {
        targetless: ['1'],
        throwAt: '1',
      },
    );
    await expect(done).rejects.toThrow('redeliver');
    expect(log).toEqual(['alone 0', 'resolve 0', 'commit offsets', 'alone 1']);
  });
});
