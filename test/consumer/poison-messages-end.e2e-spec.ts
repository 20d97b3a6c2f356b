import {
  BadRequestException,
  Catch,
  Controller,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
  type PipeTransform,
  type RpcExceptionFilter,
} from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { Transform } from 'class-transformer';
import { IsInt, IsString } from 'class-validator';
import { createHash } from 'node:crypto';
import { of } from 'rxjs';
import { IdempotentHandler } from '../../lib';
import { createTopics, describeWith, uniqueName } from '../harness';
import { OutboxConsumerMetrics, type ConsumerOptions } from '../../lib';
import {
  createTopicsWithConfig,
  dropDatabase,
  eventMessage,
  LedgerService,
  send,
  sleep,
  startConsumerApp,
  waitFor,
  type ConsumerApp,
  type ConsumerAppExtras,
  type OutgoingMessage,
} from './consumer-app.fixtures';

const DEAD_LETTERS = 'outbox_consumer_dead_letters';
const PROCESSED = 'outbox_processed_events';
const id = (ctx: KafkaContext) => String(ctx.getMessage().headers?.ce_id ?? '');

const topics = {
  pipe: uniqueName('poison-pipe'),
  guard: uniqueName('poison-guard'),
  dlq: uniqueName('poison-dlq'),
  big: uniqueName('poison-big'),
  dto: uniqueName('poison-dto'),
  hang: uniqueName('poison-hang'),
  transient: uniqueName('poison-transient'),
};
/** Never created; the broker does not create topics on demand. */
const missingDeadLetterTopic = uniqueName('missing-dlq');

/** Rejects the poison message, every time: a deterministic pipe failure. */
class RejectPoisonPipe implements PipeTransform {
  transform(value: { poison?: boolean }) {
    if (value?.poison) throw new BadRequestException('rejected by the pipe');
    return value;
  }
}

/** Denies the poison message, every time. */
class DenyPoisonGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return !(context.switchToRpc().getData() as { poison?: boolean })?.poison;
  }
}

/** A DTO whose class-transformer step throws on a message without `customer.name`. */
class OrderWithCustomer {
  @IsInt()
  n!: number;

  @IsString()
  @Transform(({ value }) => (value as { name: string }).name.toUpperCase())
  customer!: string;
}

@Controller()
class PoisonHandlers {
  constructor(private readonly ledger: LedgerService) {}

  @EventPattern(topics.pipe)
  @IdempotentHandler({ consumer: 'poison.pipe' })
  async pipe(@Payload(RejectPoisonPipe) p: { n: number }, @Ctx() ctx: KafkaContext) {
    await this.ledger.record('poison.pipe', id(ctx), p.n);
  }

  @EventPattern(topics.guard)
  @IdempotentHandler({ consumer: 'poison.guard' })
  @UseGuards(DenyPoisonGuard)
  async guard(@Payload() p: { n: number }, @Ctx() ctx: KafkaContext) {
    await this.ledger.record('poison.guard', id(ctx), p.n);
  }

  @EventPattern(topics.dlq)
  @IdempotentHandler({ consumer: 'poison.dlq', deadLetterTopic: missingDeadLetterTopic })
  async dlq(@Payload() p: { n: number; poison?: boolean }, @Ctx() ctx: KafkaContext) {
    if (p.poison) throw new Error('cannot apply this one');
    await this.ledger.record('poison.dlq', id(ctx), p.n);
  }

  @EventPattern(topics.dto)
  @IdempotentHandler({ consumer: 'poison.dto', dto: OrderWithCustomer })
  async dto(@Payload() p: OrderWithCustomer, @Ctx() ctx: KafkaContext) {
    await this.ledger.record('poison.dto', id(ctx), p.n);
  }

  @EventPattern(topics.big)
  @IdempotentHandler({ consumer: 'poison.big' })
  async big(@Payload() p: { n: number; poison?: boolean }, @Ctx() ctx: KafkaContext) {
    if (p.poison) throw new Error('too big to apply');
    await this.ledger.record('poison.big', id(ctx), p.n);
  }
}

/** A MongoDB error as the driver labels one the whole transaction may be retried after. */
const transientError = () =>
  Object.assign(new Error('WriteConflict (simulated)'), {
    code: 112,
    errorLabels: ['TransientTransactionError'],
    hasErrorLabel: (label: string) => label === 'TransientTransactionError',
  });
const transientCalls = new Map<string, number>();

@Controller()
class TimingHandlers {
  constructor(private readonly ledger: LedgerService) {}

  /** Never returns for a poison event: its attempts time out. */
  @EventPattern(topics.hang)
  @IdempotentHandler({ consumer: 'poison.hang', handlerTimeoutMs: 1000 })
  async hang(@Payload() p: { n: number; poison?: boolean }, @Ctx() ctx: KafkaContext) {
    if (p.poison) await new Promise(() => undefined);
    await this.ledger.record('poison.hang', id(ctx), p.n);
  }

  /** Writes, then fails with a transient transaction error on the event's first call. */
  @EventPattern(topics.transient)
  @IdempotentHandler({ consumer: 'poison.transient' })
  async transient(@Payload() p: { n: number; poison?: boolean }, @Ctx() ctx: KafkaContext) {
    const calls = (transientCalls.get(id(ctx)) ?? 0) + 1;
    transientCalls.set(id(ctx), calls);
    await this.ledger.record('poison.transient', id(ctx), p.n);
    if (p.poison && calls === 1) throw transientError();
  }
}

/** A catch-all RPC filter that turns every error into a reply: Nest then acknowledges. */
@Catch()
class SwallowEverything implements RpcExceptionFilter {
  catch() {
    return of({ handled: true });
  }
}

const flakyTopic = uniqueName('poison-filter');
/** Topics of the batched mode, by pattern (`OutboxKafkaServer` routes by the `ce_type` header). */
const batchedTopics = new Map(
  [...Object.values(topics), flakyTopic].map((pattern) => [pattern, `${pattern}-batched`]),
);
const flakyCalls = new Map<string, number>();

@Controller()
class FlakyHandlers {
  constructor(private readonly ledger: LedgerService) {}

  @EventPattern(flakyTopic)
  @IdempotentHandler({ consumer: 'poison.filter' })
  async flaky(@Payload() p: { n: number }, @Ctx() ctx: KafkaContext) {
    const calls = (flakyCalls.get(id(ctx)) ?? 0) + 1;
    flakyCalls.set(id(ctx), calls);
    if (calls === 1) throw new Error('first delivery fails');
    await this.ledger.record('poison.filter', id(ctx), p.n);
  }
}

/**
 * How the consumer app of a case is run: Nest's `Transport.KAFKA` (one message at a time), or
 * `OutboxKafkaServer` with batching on (issue 32), where the messages are on the topic before
 * the consumer starts so that Kafka fetches them together and they form one batch.
 */
interface Mode {
  name: string;
  batched: boolean;
}
const modes: Mode[] = [
  { name: 'one message at a time (Transport.KAFKA)', batched: false },
  { name: 'in batches (OutboxKafkaServer, consumer.batch.maxEvents 100)', batched: true },
];

/**
 * Every poison path ends (issue 11): a message that a pipe or a guard rejects every time, a
 * message whose dead-letter topic does not exist, and a 17 MB message are each dead-lettered
 * within `maxFailures`, and the messages after them on the same partition are applied. With
 * batching on (issue 32), the same cases end the same way: the failing event aborts its batch,
 * which is applied again one event at a time.
 */
describe.each(modes)('$name', (mode) => {
  describeWith(['mongodb', 'kafka'], 'poison messages end and their partition moves on', () => {
    const db = uniqueName('poison');
    let consumer: ConsumerApp | undefined;
    /** The topic of a pattern in this mode. */
    const topicOf = (pattern: string) => (mode.batched ? batchedTopics.get(pattern)! : pattern);

    beforeAll(async () => {
      await createTopics(
        [
          topics.pipe,
          topics.guard,
          topics.dlq,
          topics.dto,
          topics.hang,
          topics.transient,
          flakyTopic,
        ].map(topicOf),
        1,
      );
      // Kafka accepts ~1 MB per message by default: this topic takes 20 MB.
      await createTopicsWithConfig(
        [topicOf(topics.big)],
        [{ name: 'max.message.bytes', value: '20971520' }],
      );
    }, 60000);

    /** Starts the consumer app and sends `messages`: in batched mode, sends first. */
    async function startAndSend(
      controllers: Array<new (...args: never[]) => unknown>,
      options: ConsumerOptions,
      sends: Array<[string, OutgoingMessage[]]>,
      extras: ConsumerAppExtras = {},
    ): Promise<ConsumerApp> {
      const sendAll = async () => {
        for (const [pattern, messages] of sends) {
          await send(
            topicOf(pattern),
            mode.batched
              ? messages.map((m) => ({ ...m, headers: { ...m.headers, ce_type: pattern } }))
              : messages,
          );
        }
      };
      if (mode.batched) await sendAll();
      const app = await startConsumerApp(
        db,
        controllers,
        mode.batched
          ? { ...options, batch: { maxEvents: 100 } }
          : { ...options, batch: { maxEvents: 1 } },
        mode.batched
          ? { ...extras, outboxServerTopics: sends.map(([pattern]) => topicOf(pattern)) }
          : extras,
      );
      if (!mode.batched) await sendAll();
      return app;
    }

    afterEach(async () => {
      await consumer?.close();
      consumer = undefined;
    }, 30000);

    afterAll(() => dropDatabase(db));

    const applied = (name: string, eventId: string) =>
      consumer!.connection.collection('ledger').countDocuments({ consumer: name, eventId });
    const deadLetter = (name: string, eventId: string) =>
      consumer!.connection.collection(DEAD_LETTERS).findOne({ consumer: name, eventId });
    const poisonThenGood = (prefix: string) => [
      eventMessage(`${prefix}-1`, { n: 1, poison: true }),
      eventMessage(`${prefix}-2`, { n: 2 }),
      eventMessage(`${prefix}-3`, { n: 3 }),
    ];

    /** In batched mode, the case went through batches (committed or fallen back). */
    const expectBatched = () => {
      const { batches, batchFallbacks } = consumer!.app.get(OutboxConsumerMetrics).snapshot();
      if (mode.batched) expect(batches + batchFallbacks).toBeGreaterThan(0);
      else expect({ batches, batchFallbacks }).toEqual({ batches: 0, batchFallbacks: 0 });
    };

    it('pipe and guard rejections are counted and dead-lettered; later messages are applied', async () => {
      consumer = await startAndSend([PoisonHandlers], { maxFailures: 2 }, [
        [topics.pipe, poisonThenGood('pipe')],
        [topics.guard, poisonThenGood('guard')],
      ]);
      for (const [name, prefix] of [
        ['poison.pipe', 'pipe'],
        ['poison.guard', 'guard'],
      ]) {
        await waitFor(
          async () => (await applied(name, `${prefix}-3`)) === 1,
          60_000,
          `${prefix}-3`,
        );
        expect(await applied(name, `${prefix}-2`)).toBe(1);
        expect(await applied(name, `${prefix}-1`)).toBe(0);
        const letter = await deadLetter(name, `${prefix}-1`);
        expect(letter).toMatchObject({ status: 'dead', reason: 'max-failures', attempts: 2 });
      }
      expect((await deadLetter('poison.pipe', 'pipe-1'))!.lastError).toMatch(
        /rejected by the pipe/,
      );
      expect((await deadLetter('poison.guard', 'guard-1'))!.lastError).toMatch(/Forbidden/);
      expectBatched();
    }, 120000);

    // Issue 18, defect 5: the dto's exception escaped the flow and the message came back forever.
    it('a dto whose transform throws: the message is dead-lettered as invalid-payload and the partition moves on', async () => {
      consumer = await startAndSend([PoisonHandlers], { maxFailures: 2 }, [
        [
          topics.dto,
          [
            eventMessage('dto-1', { n: 1, customer: {} }),
            eventMessage('dto-2', { n: 2, customer: { name: 'ada' } }),
          ],
        ],
      ]);
      await waitFor(async () => (await applied('poison.dto', 'dto-2')) === 1, 60_000, 'dto-2');
      expect(await applied('poison.dto', 'dto-1')).toBe(0);
      expect(await deadLetter('poison.dto', 'dto-1')).toMatchObject({
        status: 'dead',
        reason: 'invalid-payload',
        attempts: 0,
        lastError: expect.stringMatching(/^dto OrderWithCustomer threw: TypeError/),
      });
    }, 90000);

    it('a missing dead-letter topic: the letter is kept in MongoDB, marked unpublished, and the partition moves on', async () => {
      consumer = await startAndSend([PoisonHandlers], { maxFailures: 2 }, [
        [topics.dlq, poisonThenGood('dlq')],
      ]);
      await waitFor(async () => (await applied('poison.dlq', 'dlq-3')) === 1, 90_000, 'dlq-3');
      expect(await applied('poison.dlq', 'dlq-2')).toBe(1);
      const letter = await deadLetter('poison.dlq', 'dlq-1');
      expect(letter).toMatchObject({
        status: 'dead',
        reason: 'max-failures',
        topicCopy: { topic: missingDeadLetterTopic, published: false },
      });
      expect(letter!.topicCopy.error).toBeTruthy();
    }, 150000);

    it('a 17 MB message is dead-lettered as a truncated copy with its size and hash', async () => {
      const blob = 'x'.repeat(17 * 1024 * 1024);
      const value = Buffer.from(JSON.stringify({ n: 1, poison: true, blob }));
      consumer = await startAndSend([PoisonHandlers], { maxFailures: 2 }, [
        [
          topics.big,
          [
            { value, headers: { ce_id: 'big-1' } },
            eventMessage('big-2', { n: 2 }),
            eventMessage('big-3', { n: 3 }),
          ],
        ],
      ]);
      await waitFor(async () => (await applied('poison.big', 'big-3')) === 1, 90_000, 'big-3');
      expect(await applied('poison.big', 'big-2')).toBe(1);
      const letter = await deadLetter('poison.big', 'big-1');
      expect(letter).toMatchObject({
        status: 'dead',
        reason: 'max-failures',
        valueBytes: value.length,
        valueSha256: createHash('sha256').update(value).digest('hex'),
        valueTruncated: true,
      });
      expect(letter!.value.length).toBeLessThan(2 * 1024 * 1024);
      expect(value.toString('utf8').startsWith(letter!.value)).toBe(true);
    }, 150000);

    it('a handler that hangs: each attempt times out, the event is dead-lettered, the others are applied', async () => {
      consumer = await startAndSend([TimingHandlers], { maxFailures: 2 }, [
        [
          topics.hang,
          [
            eventMessage('hang-1', { n: 1 }),
            eventMessage('hang-2', { n: 2, poison: true }),
            eventMessage('hang-3', { n: 3 }),
          ],
        ],
      ]);
      await waitFor(async () => (await applied('poison.hang', 'hang-3')) === 1, 60_000, 'hang-3');
      expect(await applied('poison.hang', 'hang-1')).toBe(1);
      expect(await applied('poison.hang', 'hang-2')).toBe(0);
      expect(await deadLetter('poison.hang', 'hang-2')).toMatchObject({
        status: 'dead',
        reason: 'max-failures',
        attempts: 2,
        lastError: expect.stringMatching(/handlerTimeoutMs \(1000 ms\)/),
      });
      expectBatched();
    }, 120000);

    it('a transient transaction error: the event is applied once, nothing counted or dead-lettered', async () => {
      transientCalls.clear();
      consumer = await startAndSend([TimingHandlers], {}, [
        [
          topics.transient,
          [
            eventMessage('tr-1', { n: 1 }),
            eventMessage('tr-2', { n: 2, poison: true }),
            eventMessage('tr-3', { n: 3 }),
          ],
        ],
      ]);
      await waitFor(async () => (await applied('poison.transient', 'tr-3')) === 1, 60_000, 'tr-3');
      for (const eventId of ['tr-1', 'tr-2']) {
        expect(await applied('poison.transient', eventId)).toBe(1);
      }
      expect(transientCalls.get('tr-2')).toBe(2);
      expect(await deadLetter('poison.transient', 'tr-2')).toBeNull();
      // Nothing failing or dead-lettered is left for the consumer.
      expect(
        await consumer.connection
          .collection(DEAD_LETTERS)
          .countDocuments({ consumer: 'poison.transient' }),
      ).toBe(0);
      expectBatched();
    }, 120000);

    it('a catch-all exception filter that returns a value does not acknowledge a failed event', async () => {
      flakyCalls.clear();
      consumer = await startAndSend(
        [FlakyHandlers],
        {},
        [[flakyTopic, [eventMessage('f-1', { n: 1 }), eventMessage('f-2', { n: 2 })]]],
        { globalFilters: [new SwallowEverything()] },
      );
      await waitFor(async () => (await applied('poison.filter', 'f-2')) === 1, 60_000, 'f-2');
      await waitFor(async () => (await applied('poison.filter', 'f-1')) === 1, 10_000, 'f-1');
      await sleep(300);
      expect(flakyCalls.get('f-1')).toBe(2);
      expect(
        await consumer.connection
          .collection(PROCESSED)
          .countDocuments({ consumer: 'poison.filter' }),
      ).toBe(2);
    }, 120000);
  });
});
