import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { InjectConnection } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import {
  currentHandlerScope,
  IdempotentHandler,
  OutboxConsumerMetrics,
  UnrecoverableEventError,
} from '../../lib';
import { createTopics, describeWith, uniqueName } from '../harness';
import {
  dropDatabase,
  eventMessage,
  LedgerSchema,
  LedgerService,
  send,
  sleep,
  startConsumerApp,
  waitFor,
  type ConsumerApp,
} from './consumer-app.fixtures';

const PROCESSED = 'outbox_processed_events';
const DEAD_LETTERS = 'outbox_consumer_dead_letters';
const topics = {
  hang: uniqueName('hang'),
  native: uniqueName('native'),
  unrecoverable: uniqueName('unrecoverable'),
};
const id = (ctx: KafkaContext) => String(ctx.getMessage().headers?.ce_id ?? '');

/** Releases the hung first attempt when the test says so. */
let releaseHung: () => void = () => undefined;
const hungReleased = new Promise<void>((resolve) => (releaseHung = resolve));
/** What the hung attempt's late writes did: each must have been refused. */
const lateWrites: Record<string, string> = {};
const attempts = new Map<string, number>();
const attempt = (key: string) => {
  const n = (attempts.get(key) ?? 0) + 1;
  attempts.set(key, n);
  return n;
};

@Controller()
class SlowHandlers {
  constructor(
    private readonly ledger: LedgerService,
    @InjectConnection() private readonly connection: Connection,
  ) {}

  private get ledgerModel() {
    return this.connection.models.Ledger ?? this.connection.model('Ledger', LedgerSchema);
  }

  /** The first attempt of h-1 hangs, then (released later) tries to write three ways. */
  @EventPattern(topics.hang)
  @IdempotentHandler({ consumer: 'slow.hang', handlerTimeoutMs: 1500 })
  async hang(@Payload() p: { n: number }, @Ctx() ctx: KafkaContext) {
    if (id(ctx) === 'h-1' && attempt('h-1') === 1) {
      const { signal, session } = currentHandlerScope();
      await hungReleased;
      lateWrites.aborted = String(signal.aborted);
      const tries: Array<[string, () => Promise<unknown>]> = [
        ['transactional', () => this.ledger.record('slow.hang', 'late', 0)],
        ['model', () => this.ledgerModel.create([{ consumer: 'slow.hang', eventId: 'late' }])],
        [
          'native',
          () =>
            this.connection
              .collection('ledger')
              .insertOne({ consumer: 'slow.hang', eventId: 'late' }, { session }),
        ],
        ['scope', async () => currentHandlerScope().session],
      ];
      for (const [name, write] of tries) {
        lateWrites[name] = await write().then(
          () => 'written',
          (error: Error) => `refused: ${error.name}`,
        );
      }
      return;
    }
    await this.ledger.record('slow.hang', id(ctx), p.n);
  }

  /** Native driver writes join the transaction only with the handler's session. */
  @EventPattern(topics.native)
  @IdempotentHandler({ consumer: 'slow.native' })
  async native(@Payload() p: { n: number }, @Ctx() ctx: KafkaContext) {
    const { session, eventId } = currentHandlerScope();
    await this.connection
      .collection('native_ledger')
      .insertOne({ eventId, n: p.n, attempt: attempt(`native:${eventId}`) }, { session });
    if (attempts.get(`native:${eventId}`) === 1)
      throw new Error('first attempt fails after writing');
    expect(eventId).toBe(id(ctx));
  }

  /** Gives up at once: no retries. */
  @EventPattern(topics.unrecoverable)
  @IdempotentHandler({ consumer: 'slow.unrecoverable', maxFailures: 5 })
  async unrecoverable(@Payload() p: { n: number; bad?: boolean }, @Ctx() ctx: KafkaContext) {
    attempt(`u:${id(ctx)}`);
    if (p.bad) throw new UnrecoverableEventError('this order no longer exists');
    await this.ledger.record('slow.unrecoverable', id(ctx), p.n);
  }
}

/**
 * Issue 11, defects 5 and 8: a handler that never returns is timed out (its transaction aborted,
 * its late writes refused) without holding the partition; native driver writes join the handler's
 * transaction through `currentHandlerScope().session`; `UnrecoverableEventError` dead-letters at once.
 */
describeWith(
  ['mongodb', 'kafka'],
  'handler timeout, the handler session, unrecoverable errors',
  () => {
    const db = uniqueName('slow');
    let consumer: ConsumerApp;

    beforeAll(async () => {
      await createTopics(Object.values(topics), 1);
      consumer = await startConsumerApp(db, [SlowHandlers], {
        maxFailures: 3,
        retryBackoff: { initialMs: 50, maxMs: 200 },
      });
    }, 60000);
    afterAll(async () => {
      await consumer?.close();
      await dropDatabase(db);
    });

    const ledger = (name: string, eventId: string) =>
      consumer.connection.collection('ledger').countDocuments({ consumer: name, eventId });

    it('a hanging handler is timed out: retried, applied once, its late writes refused', async () => {
      const started = Date.now();
      await send(topics.hang, [eventMessage('h-1', { n: 1 }), eventMessage('h-2', { n: 2 })]);
      await waitFor(async () => (await ledger('slow.hang', 'h-2')) === 1, 30_000, 'h-2 applied');
      // The partition was held for about one timeout, far below the session timeout (30 s).
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(await ledger('slow.hang', 'h-1')).toBe(1);
      expect(attempts.get('h-1')).toBe(2);

      releaseHung();
      await waitFor(() => lateWrites.scope !== undefined, 10_000, 'the late writes tried');
      expect(lateWrites).toEqual({
        aborted: 'true',
        transactional: expect.stringMatching(/^refused/),
        model: expect.stringMatching(/^refused/),
        native: expect.stringMatching(/^refused/),
        scope: 'refused: HandlerTimeoutError',
      });
      await sleep(300);
      expect(await ledger('slow.hang', 'late')).toBe(0);
      expect(
        await consumer.connection
          .collection(DEAD_LETTERS)
          .countDocuments({ consumer: 'slow.hang' }),
      ).toBe(0);
      const metrics = consumer.app.get(OutboxConsumerMetrics).snapshot();
      expect(metrics.timeouts).toBeGreaterThanOrEqual(1);
      expect(metrics.applied).toBeGreaterThanOrEqual(2);
      expect(metrics.handlerDuration.maxMs).toBeGreaterThanOrEqual(1500);
    }, 60000);

    it('a native write with the handler session is rolled back with the failed attempt', async () => {
      await send(topics.native, [eventMessage('n-1', { n: 1 })]);
      await waitFor(
        async () =>
          (await consumer.connection
            .collection(PROCESSED)
            .countDocuments({ consumer: 'slow.native' })) === 1,
        30_000,
        'n-1 applied',
      );
      const rows = await consumer.connection.collection('native_ledger').find().toArray();
      expect(rows.map((r) => [r.eventId, r.attempt])).toEqual([['n-1', 2]]);
    }, 60000);

    it('UnrecoverableEventError dead-letters at once; the next message is applied', async () => {
      await send(topics.unrecoverable, [
        eventMessage('u-1', { n: 1, bad: true }),
        eventMessage('u-2', { n: 2 }),
      ]);
      await waitFor(async () => (await ledger('slow.unrecoverable', 'u-2')) === 1, 30_000, 'u-2');
      expect(attempts.get('u:u-1')).toBe(1);
      const letter = await consumer.connection
        .collection(DEAD_LETTERS)
        .findOne({ consumer: 'slow.unrecoverable', eventId: 'u-1' });
      expect(letter).toMatchObject({
        status: 'dead',
        reason: 'unrecoverable',
        attempts: 1,
        lastError: 'UnrecoverableEventError: this order no longer exists',
      });
      expect(letter!.errors).toEqual([
        {
          at: expect.any(Date),
          attempt: 1,
          error: 'UnrecoverableEventError: this order no longer exists',
        },
      ]);
    }, 60000);
  },
);
