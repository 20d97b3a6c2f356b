import {
  BadRequestException,
  Controller,
  INestMicroservice,
  Module,
  type PipeTransform,
} from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload, Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { IdempotentHandler, OutboxConsumerMetrics } from '../../lib';
import { IDEMPOTENT_HANDLER_METADATA } from '../../lib/common/outbox.constants';
import type { ConsumerFailureStore, DeadLetter } from '../../lib/consumer/consume.ports';
import { resolveConsumerOptions } from '../../lib/consumer/consumer.options';
import { ConsumerSink } from '../../lib/consumer/flow/consumer-sink';
import {
  DEAD_LETTER_HEADERS,
  isProducerLike,
  ProducerDeadLetterPublisher,
} from '../../lib/consumer/flow/dead-letter.publisher';
import {
  consumeIdempotently,
  consumeRejected,
  RedeliveryRequired,
  type ConsumeDeps,
} from '../../lib/consumer/flow/idempotent-consume.flow';
import {
  IdempotentHandlerBindings,
  type IdempotentHandlerRuntimeApi,
} from '../../lib/consumer/nest/idempotent-handler.bindings';
import {
  mergeWithDefaults,
  type IdempotentHandlerSettings,
} from '../../lib/consumer/idempotent-handler.options';
import { redeliver, type KafkaDelivery } from '../../lib/consumer/nest/kafka-delivery';
import {
  createTopics,
  describeWith,
  readTopic,
  testKafka,
  testServers,
  uniqueName,
} from '../harness';
import { testLogLevels, waitFor } from './consumer-app.fixtures';

/**
 * What only the real Kafka transport can show, without MongoDB: Nest 11's ServerKafka hands the
 * wrapper a KafkaContext with the real headers and value; malformed messages are dead-lettered (to
 * the real dead-letter topic, through the transport's own producer) and acknowledged, so the
 * partition moves on; a failing handler is retried within its delivery; a rejection by a pipe
 * reaches the method's own filter, and the ConsumerRetryError it ends with makes kafkajs deliver
 * the same message again (after the paused partition resumes).
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
    const received: Array<{ payload: Record<string, unknown>; offset: string }> = [];
    const calls = new Map<string, number>();
    const pipeRuns = new Map<string, number>();
    const deadLetters: DeadLetter[] = [];
    let allDone: () => void;
    const done = new Promise<void>((resolve) => (allDone = resolve));
    const count = (map: Map<string, number>, key: string) => {
      const n = (map.get(key) ?? 0) + 1;
      map.set(key, n);
      return n;
    };

    /** Rejects the first delivery of a message marked `rejectOnce`. */
    class RejectOncePipe implements PipeTransform {
      transform(value: { rejectOnce?: boolean; n: number }) {
        if (value?.rejectOnce && count(pipeRuns, String(value.n)) === 1) {
          throw new BadRequestException('rejected by the pipe once');
        }
        return value;
      }
    }

    @Controller()
    class OrderEvents {
      @EventPattern(topic)
      @IdempotentHandler({ consumer: 'transport-test', deadLetterTopic: dlq })
      onOrder(
        @Payload(RejectOncePipe) payload: { n: number; flaky?: boolean },
        @Ctx() ctx: KafkaContext,
      ) {
        const id = String(ctx.getMessage().headers?.ce_id);
        const n = count(calls, id);
        if (payload.flaky && n === 1) throw new Error('first attempt fails');
        received.push({ payload, offset: String(ctx.getMessage().offset) });
        if (received.length === 5) allDone();
      }
    }

    @Module({ controllers: [OrderEvents] })
    class ConsumerModule {}

    /** In-memory stand-ins for the MongoDB stores (the seam the real runtime fills). */
    const applied = new Set<string>();
    let staged: Set<string> | undefined;
    /** Keeps the processed record only if the handler returns, as a MongoDB transaction would. */
    const runner = {
      run: async <T>(fn: () => Promise<T>): Promise<T> => {
        staged = new Set();
        try {
          const result = await fn();
          staged.forEach((key) => applied.add(key));
          return result;
        } finally {
          staged = undefined;
        }
      },
      currentSession: () => undefined,
    };
    const failures = new Map<string, number>();
    const failureStore: ConsumerFailureStore = {
      recordFailure: async (consumer, eventId) => count(failures, `${consumer}|${eventId}`),
      clearFailures: async () => undefined,
      deadLetter: async (letter) => {
        deadLetters.push(letter);
      },
    };
    const quiet = {
      debug: () => undefined,
      log: () => undefined,
      warn: () => undefined,
      error: () => undefined,
    };
    const defaults = resolveConsumerOptions({
      maxFailures: 3,
      retryBackoff: { initialMs: 100, maxMs: 500 },
    });
    const metrics = new OutboxConsumerMetrics();
    const sink = new ConsumerSink(failureStore, quiet);
    const deps = (delivery: KafkaDelivery): ConsumeDeps => ({
      runner,
      processed: {
        wasApplied: async (consumer, eventId) => applied.has(`${consumer}|${eventId}`),
        appliedAmong: async (consumer, eventIds) =>
          eventIds.filter((eventId) => applied.has(`${consumer}|${eventId}`)),
        insertMany: () => Promise.reject(new Error('no batches on Transport.KAFKA')),
        insert: async (consumer, eventId) => {
          const key = `${consumer}|${eventId}`;
          if (applied.has(key) || staged?.has(key))
            throw Object.assign(new Error('dup'), { code: 11000 });
          staged?.add(key);
        },
      },
      sink,
      metrics,
      logger: quiet,
      ...(isProducerLike(delivery.producer)
        ? { publisher: new ProducerDeadLetterPublisher(delivery.producer, 1024) }
        : {}),
    });
    /** What IdempotentHandlerRuntime does around the flow, minus MongoDB. */
    const guard = async <T>(delivery: KafkaDelivery, run: () => Promise<T>): Promise<T> => {
      try {
        return await run();
      } catch (error) {
        if (!(error instanceof RedeliveryRequired)) throw error;
        throw redeliver(delivery, error.message, error.pauseMs, error.cause, {});
      }
    };
    const runtime: IdempotentHandlerRuntimeApi = {
      // Nest's own Kafka transport delivers one message at a time: never asked for a batch.
      batchLimits: defaults.batch,
      applyBatch: () => Promise.reject(new Error("Nest's ServerKafka forms no batches")),
      consume: (delivery, settings, invoke) =>
        guard(delivery, () =>
          consumeIdempotently(
            delivery,
            mergeWithDefaults(settings, defaults),
            invoke,
            deps(delivery),
          ),
        ),
      consumeRejected: (delivery, settings, error) =>
        guard(delivery, () =>
          consumeRejected(delivery, mergeWithDefaults(settings, defaults), error, deps(delivery)),
        ),
    };
    const settings: IdempotentHandlerSettings = Reflect.getMetadata(
      IDEMPOTENT_HANDLER_METADATA,
      OrderEvents.prototype.onOrder,
    );

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
      app.useLogger(testLogLevels());
      IdempotentHandlerBindings.bind(settings, runtime);
      await app.listen();
    }, 60000);

    afterAll(async () => {
      IdempotentHandlerBindings.unbind(settings, runtime);
      await app?.close();
    });

    it('dead-letters malformed messages, retries failures, redelivers a rejected one, keeps consuming', async () => {
      const producer = testKafka('idempotent-transport-producer').producer();
      await producer.connect();
      await producer.send({
        topic,
        acks: -1,
        messages: [
          { key: 'o-1', value: JSON.stringify({ n: 1 }), headers: { ce_id: 'e-1' } },
          { key: 'o-1', value: JSON.stringify({ n: 2 }) }, // no event id
          { key: 'o-1', value: '{"n":', headers: { ce_id: 'e-3' } }, // bad JSON
          { key: 'o-1', value: '{"n":4,"__proto__":{"polluted":true}}', headers: { ce_id: 'e-4' } },
          {
            key: 'o-1',
            value: '{"n":5,"constructor":{"prototype":{"polluted":true}}}',
            headers: { ce_id: 'e-5' },
          },
          { key: 'o-1', value: JSON.stringify({ n: 6, flaky: true }), headers: { ce_id: 'e-6' } },
          { key: 'o-1', value: JSON.stringify({ n: 1 }), headers: { ce_id: 'e-1' } }, // duplicate
          {
            key: 'o-1',
            value: JSON.stringify({ n: 8, rejectOnce: true }),
            headers: { ce_id: 'e-8' },
          },
          { key: 'o-1', value: JSON.stringify({ n: 9 }), headers: { ce_id: 'e-9' } },
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
                  `received only ${JSON.stringify(received)} calls ${JSON.stringify([...calls])} dead ${deadLetters.length}`,
                ),
              ),
            60000,
          ),
        ),
      ]);

      const expected: Array<Record<string, unknown>> = [
        { n: 1 },
        { n: 5, constructor: { prototype: { polluted: true } } },
        { n: 6, flaky: true },
        { n: 8, rejectOnce: true },
        { n: 9 },
      ];
      expect(received.map((r) => ({ ...r.payload }))).toEqual(expected);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      // The failing handler was retried within its delivery; the duplicate never reached it.
      expect(calls.get('e-6')).toBe(2);
      expect(calls.get('e-1')).toBe(1);
      // The pipe rejection came back through the filter and a redelivery of the same offset.
      expect(pipeRuns.get('8')).toBe(2);
      expect(calls.get('e-8')).toBe(1);
      expect(failures.get('transport-test|e-8')).toBe(1);
      // The last handler call returned; its outcome is counted right after.
      await waitFor(() => metrics.snapshot().applied === 5, 5000, 'the last outcome counted');
      expect(metrics.snapshot()).toMatchObject({
        applied: 5,
        duplicates: 1,
        failures: 2,
        deadLettered: 3,
      });
      expect(deadLetters.map((d) => [d.eventId, d.reason])).toEqual([
        [null, 'missing-event-id'],
        ['e-3', 'invalid-json'],
        ['e-4', 'forbidden-key'],
      ]);
      expect(deadLetters.every((d) => d.topicCopy?.published)).toBe(true);

      const onTopic = await readTopic(dlq, { count: 3, timeoutMs: 20000 });
      expect(onTopic.map((r) => r.headers[DEAD_LETTER_HEADERS.reason])).toEqual([
        'missing-event-id',
        'invalid-json',
        'forbidden-key',
      ]);
      expect(onTopic[1]).toMatchObject({ key: 'o-1', value: '{"n":' });
      expect(onTopic[1].headers[DEAD_LETTER_HEADERS.consumer]).toBe('transport-test');
      expect(onTopic[1].headers[DEAD_LETTER_HEADERS.source]).toBe(`${topic}/0/2`);
      expect(onTopic[1].headers[DEAD_LETTER_HEADERS.valueBytes]).toBe('5');
    }, 90000);
  },
);
