import { Controller, INestMicroservice, Module } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload, Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { IdempotentHandler } from '../../lib';
import type { ConsumedMessage } from '../../lib/consumer/consumed-message';
import { resolveConsumerOptions } from '../../lib/consumer/consumer.options';
import {
  DEAD_LETTER_HEADERS,
  isProducerLike,
  ProducerDeadLetterPublisher,
} from '../../lib/consumer/dead-letter.publisher';
import {
  consumeIdempotently,
  type ConsumerFailureStore,
  type DeadLetter,
} from '../../lib/consumer/idempotent-consume.flow';
import {
  IdempotentHandlerHost,
  type IdempotentHandlerRuntimeApi,
} from '../../lib/consumer/idempotent-handler.host';
import {
  mergeWithDefaults,
  type IdempotentHandlerSettings,
} from '../../lib/consumer/idempotent-handler.options';
import {
  createTopics,
  describeWith,
  readTopic,
  testKafka,
  testServers,
  uniqueName,
} from '../harness';

/**
 * What only the real Kafka transport can show, without MongoDB: Nest 11's ServerKafka hands the
 * wrapper a KafkaContext with the real headers and value; malformed messages are dead-lettered (to
 * the real dead-letter topic, through the transport's own producer) and acknowledged, so the
 * partition moves on; a ConsumerRetryError makes kafkajs deliver the same message again.
 *
 * The dedupe and failure stores here are in memory and the "transaction" is a plain call: this
 * suite claims nothing about MongoDB (see applied-once.e2e-spec.ts for that).
 */
describeWith(
  ['kafka'],
  '@IdempotentHandler over the real Kafka transport (stores in memory)',
  () => {
    const topic = uniqueName('orders');
    const dlq = uniqueName('orders-dlq');
    const received: Array<{ payload: unknown; offset: string }> = [];
    const deliveries = new Map<string, number>();
    const deadLetters: DeadLetter[] = [];
    let allDone: () => void;
    const done = new Promise<void>((resolve) => (allDone = resolve));

    @Controller()
    class OrderEvents {
      @EventPattern(topic)
      @IdempotentHandler({ consumer: 'transport-test', deadLetterTopic: dlq })
      onOrder(@Payload() payload: { n: number; flaky?: boolean }, @Ctx() ctx: KafkaContext) {
        const id = String(ctx.getMessage().headers?.ce_id);
        const count = (deliveries.get(id) ?? 0) + 1;
        deliveries.set(id, count);
        if (payload.flaky && count === 1) throw new Error('first delivery fails');
        received.push({ payload, offset: String(ctx.getMessage().offset) });
        if (received.length === 3) allDone();
      }
    }

    @Module({ controllers: [OrderEvents] })
    class ConsumerModule {}

    /** In-memory stand-ins for the MongoDB stores (the seam the real runtime fills). */
    const applied = new Set<string>();
    let staged: Set<string> | undefined;
    /** Keeps the processed record only if the handler returns, as a MongoDB transaction would. */
    const runInMemoryTransaction = async <T>(fn: () => Promise<T>): Promise<T> => {
      staged = new Set();
      try {
        const result = await fn();
        staged.forEach((key) => applied.add(key));
        return result;
      } finally {
        staged = undefined;
      }
    };
    const failures = new Map<string, number>();
    const failureStore: ConsumerFailureStore = {
      recordFailure: async (consumer, eventId) => {
        const n = (failures.get(`${consumer}|${eventId}`) ?? 0) + 1;
        failures.set(`${consumer}|${eventId}`, n);
        return n;
      },
      clearFailures: async () => undefined,
      deadLetter: async (letter) => {
        deadLetters.push(letter);
      },
    };
    const defaults = resolveConsumerOptions({ maxFailures: 3 });
    const runtime: IdempotentHandlerRuntimeApi = {
      consume: (
        message: ConsumedMessage,
        settings: IdempotentHandlerSettings,
        invoke: (payload: unknown) => unknown,
        producer: unknown,
      ) =>
        consumeIdempotently(message, mergeWithDefaults(settings, defaults), invoke, {
          runner: { run: runInMemoryTransaction },
          processed: {
            insert: async (consumer, eventId) => {
              const key = `${consumer}|${eventId}`;
              if (applied.has(key) || staged?.has(key)) {
                throw Object.assign(new Error('dup'), { code: 11000 });
              }
              staged?.add(key);
            },
          },
          failures: failureStore,
          deadLetterPublisher: isProducerLike(producer)
            ? new ProducerDeadLetterPublisher(producer)
            : undefined,
          logger: { debug: () => undefined, warn: () => undefined, error: () => undefined },
        }),
    };

    let app: INestMicroservice;

    beforeAll(async () => {
      await createTopics([topic, dlq], 1);
      const moduleRef = await Test.createTestingModule({ imports: [ConsumerModule] }).compile();
      app = moduleRef.createNestMicroservice({
        transport: Transport.KAFKA,
        options: {
          client: { clientId: 'idempotent-transport', brokers: testServers().kafkaBrokers },
          consumer: { groupId: uniqueName('idempotent-transport') },
          subscribe: { fromBeginning: true },
        },
      });
      app.useLogger(process.env.CONSUMER_DEBUG ? ['error', 'warn', 'log', 'debug'] : false);
      IdempotentHandlerHost.register(undefined, runtime);
      await app.listen();
    }, 60000);

    afterAll(async () => {
      IdempotentHandlerHost.unregister(undefined, runtime);
      await app?.close();
    });

    it('dead-letters malformed messages, redelivers a failed one, and keeps consuming', async () => {
      const producer = testKafka('idempotent-transport-producer').producer();
      await producer.connect();
      await producer.send({
        topic,
        acks: -1,
        messages: [
          { key: 'o-1', value: JSON.stringify({ n: 1 }), headers: { ce_id: 'e-1' } },
          { key: 'o-1', value: JSON.stringify({ n: 2 }) }, // no event id
          { key: 'o-1', value: '{"n":', headers: { ce_id: 'e-3' } }, // bad JSON
          {
            key: 'o-1',
            value: '{"n":4,"__proto__":{"polluted":true}}',
            headers: { ce_id: 'e-4' },
          },
          {
            key: 'o-1',
            value: '{"n":5,"constructor":{"prototype":{"polluted":true}}}',
            headers: { ce_id: 'e-5' },
          },
          { key: 'o-1', value: JSON.stringify({ n: 6, flaky: true }), headers: { ce_id: 'e-6' } },
          { key: 'o-1', value: JSON.stringify({ n: 1 }), headers: { ce_id: 'e-1' } }, // duplicate
          { key: 'o-1', value: JSON.stringify({ n: 8 }), headers: { ce_id: 'e-8' } },
        ],
      });
      await producer.disconnect();

      await Promise.race([
        done,
        new Promise((_, reject) =>
          setTimeout(
            () =>
              reject(
                new Error(
                  `received only ${JSON.stringify(received)} deliveries ${JSON.stringify([...deliveries])} dead ${deadLetters.length}`,
                ),
              ),
            60000,
          ),
        ),
      ]);

      expect(received.map((r) => r.payload)).toEqual([{ n: 1 }, { n: 6, flaky: true }, { n: 8 }]);
      // The failed message was delivered again by the transport (same offset), then applied.
      expect(deliveries.get('e-6')).toBe(2);
      expect(deliveries.get('e-1')).toBe(1);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(deadLetters.map((d) => [d.eventId, d.reason])).toEqual([
        [null, 'missing-event-id'],
        ['e-3', 'invalid-json'],
        ['e-4', 'forbidden-key'],
        ['e-5', 'forbidden-key'],
      ]);
      expect(deadLetters[1].value).toBe('{"n":');

      const onTopic = await readTopic(dlq, { count: 4, timeoutMs: 20000 });
      expect(onTopic.map((r) => r.headers[DEAD_LETTER_HEADERS.reason])).toEqual([
        'missing-event-id',
        'invalid-json',
        'forbidden-key',
        'forbidden-key',
      ]);
      expect(onTopic[1]).toMatchObject({ key: 'o-1', value: '{"n":' });
      expect(onTopic[1].headers[DEAD_LETTER_HEADERS.consumer]).toBe('transport-test');
      expect(onTopic[1].headers[DEAD_LETTER_HEADERS.source]).toMatch(new RegExp(`^${topic}/0/2$`));
    }, 90000);
  },
);
