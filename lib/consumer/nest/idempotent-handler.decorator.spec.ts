import 'reflect-metadata';
import { Controller, ExecutionContext, Logger } from '@nestjs/common';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import { IDEMPOTENT_HANDLER_METADATA } from '../../common/outbox.constants';
import type { ConsumeOutcome } from '../consume.ports';
import {
  ConsumerRetryError,
  IdempotentHandlerBootstrapError,
  IdempotentHandlerOptionsError,
} from '../consumer.errors';
import {
  IdempotentHandlerBindings,
  type IdempotentHandlerRuntimeApi,
} from './idempotent-handler.bindings';
import { IdempotentHandler } from './idempotent-handler.decorator';
import { isIdempotentHandlerFilter } from './idempotent-handler.filter';
import type { IdempotentHandlerSettings } from '../idempotent-handler.options';
import type { KafkaDelivery } from './kafka-delivery';
import { methodExceptionFilters, patternHandlerKind } from './nest-internals';

/** A runtime that applies everything: shows what the wrapper and its filter hand over. */
class RecordingRuntime implements IdempotentHandlerRuntimeApi {
  deliveries: KafkaDelivery[] = [];
  rejections: unknown[] = [];
  payload: unknown = { orderId: 'decoded' };
  outcome: 'applied' | 'duplicate' = 'applied';
  readonly batchLimits = { maxEvents: 1, maxBytes: 1024 };
  applyBatch(): Promise<never> {
    return Promise.reject(new Error('not batched here'));
  }

  async consume(
    delivery: KafkaDelivery,
    _s: IdempotentHandlerSettings,
    invoke: (p: unknown) => unknown,
  ) {
    this.deliveries.push(delivery);
    if (this.outcome === 'duplicate')
      return { kind: 'duplicate', eventId: 'e-1' } as ConsumeOutcome;
    return { kind: 'applied', result: await invoke(this.payload) } as ConsumeOutcome;
  }

  async consumeRejected(_delivery: KafkaDelivery, _s: IdempotentHandlerSettings, error: unknown) {
    this.rejections.push(error);
    return { kind: 'dead-lettered', eventId: 'e-1', reason: 'max-failures' } as ConsumeOutcome;
  }
}

const consumer = { pause: jest.fn(), resume: jest.fn() };
const producer = { send: jest.fn() };
function kafkaContext(): KafkaContext {
  return new KafkaContext([
    { key: 'o-1', value: { orderId: 'from-nest' }, headers: { ce_id: 'e-1' }, offset: '5' },
    2,
    'Order',
    consumer,
    async () => undefined,
    producer,
  ] as never);
}

@Controller()
class OrderEvents {
  seen: unknown[][] = [];

  @EventPattern('OrderPlaced')
  @IdempotentHandler()
  below(@Payload() data: unknown, @Ctx() ctx: KafkaContext) {
    this.seen.push([data, ctx]);
    return 'below';
  }

  @IdempotentHandler({ consumer: 'billing.orders' })
  @EventPattern('OrderPaid', { extra: 1 })
  above(@Payload() data: unknown, @Ctx() ctx: KafkaContext) {
    this.seen.push([data, ctx]);
    return 'above';
  }

  @EventPattern('OrderShipped')
  @IdempotentHandler()
  undecorated(data: unknown, ctx: KafkaContext) {
    this.seen.push([data, ctx]);
  }

  @EventPattern('OrderCancelled')
  @IdempotentHandler()
  byProperty(@Ctx() ctx: KafkaContext, @Payload('orderId') orderId: unknown) {
    this.seen.push([orderId, ctx]);
  }
}

const settingsOf = (method: keyof OrderEvents): IdempotentHandlerSettings =>
  Reflect.getMetadata(IDEMPOTENT_HANDLER_METADATA, OrderEvents.prototype[method]);
const methods = ['below', 'above', 'undecorated', 'byProperty'] as const;
/** The filter class the decorator bound to `method`, instantiated as Nest would. */
const filterOf = (method: keyof OrderEvents) => {
  const filters = methodExceptionFilters(OrderEvents.prototype[method]);
  const Filter = filters[filters.length - 1] as new () => {
    catch(e: unknown, host: ExecutionContext): unknown;
    onApplicationBootstrap(): void;
  };
  return new Filter();
};
const rpcHost = (...args: unknown[]) => ({ getArgs: () => args }) as unknown as ExecutionContext;

describe('@IdempotentHandler decorator', () => {
  beforeAll(() => Logger.overrideLogger(false));
  let runtime: RecordingRuntime;
  beforeEach(() => {
    runtime = new RecordingRuntime();
    jest.clearAllMocks();
  });
  afterEach(() => {
    for (const method of methods) IdempotentHandlerBindings.unbind(settingsOf(method), runtime);
  });
  const bindAll = () =>
    methods.forEach((m) => IdempotentHandlerBindings.bind(settingsOf(m), runtime));

  it.each(['below', 'above'] as const)(
    'keeps @EventPattern metadata whichever order the decorators are in (%s)',
    (method) => {
      const fn = OrderEvents.prototype[method];
      expect(patternHandlerKind(fn)).toBe('event');
      expect(settingsOf(method)).toMatchObject({ handler: `OrderEvents.${method}` });
      expect(fn.name).toBe(method);
    },
  );

  it('hands its settings to the transport in the pattern extras, keeping the extras of @EventPattern, whichever order', () => {
    const extrasOf = (method: keyof OrderEvents) =>
      Reflect.getMetadata('microservices:pattern_extras', OrderEvents.prototype[method]);
    expect(extrasOf('below')).toEqual({ 'outbox:idempotent_handler': settingsOf('below') });
    expect(extrasOf('above')).toEqual({
      extra: 1,
      'outbox:idempotent_handler': settingsOf('above'),
    });
  });

  it('binds its own exception filter last, so Nest consults it first', () => {
    for (const method of methods) {
      const filters = methodExceptionFilters(OrderEvents.prototype[method]);
      expect(filters.length).toBeGreaterThan(0);
      expect(isIdempotentHandlerFilter(filters[filters.length - 1])).toBe(true);
    }
  });

  it('names the consumer ClassName.method unless told otherwise', () => {
    expect(settingsOf('below')).toMatchObject({
      consumer: 'OrderEvents.below',
      consumerNamed: false,
    });
    expect(settingsOf('above')).toMatchObject({ consumer: 'billing.orders', consumerNamed: true });
  });

  it('replaces Nest data with the decoded payload, keeps `this` and the context', async () => {
    bindAll();
    const events = new OrderEvents();
    const ctx = kafkaContext();
    await expect(events.below({ orderId: 'from-nest' }, ctx)).resolves.toBe('below');
    expect(events.seen).toEqual([[{ orderId: 'decoded' }, ctx]]);
    expect(runtime.deliveries[0].message).toMatchObject({
      topic: 'Order',
      partition: 2,
      offset: '5',
      key: 'o-1',
    });
    expect(runtime.deliveries[0].producer).toBe(producer);
    expect(runtime.deliveries[0].kafkaConsumer).toBe(consumer);
  });

  it('works without parameter decorators (Nest passes data, context)', async () => {
    bindAll();
    const events = new OrderEvents();
    const ctx = kafkaContext();
    await events.undecorated({ raw: true }, ctx);
    expect(events.seen).toEqual([[{ orderId: 'decoded' }, ctx]]);
  });

  it('fills @Payload(property) from the decoded payload, own properties only, wherever @Ctx() is', async () => {
    bindAll();
    const events = new OrderEvents();
    const ctx = kafkaContext();
    await events.byProperty(ctx, 'from-nest');
    runtime.payload = {};
    await events.byProperty(ctx, 'from-nest');
    expect(events.seen).toEqual([
      ['decoded', ctx],
      [undefined, ctx],
    ]);
  });

  it('returns undefined (acknowledged) for an event already applied', async () => {
    bindAll();
    runtime.outcome = 'duplicate';
    const events = new OrderEvents();
    await expect(events.below({}, kafkaContext())).resolves.toBeUndefined();
    expect(events.seen).toEqual([]);
  });

  // Defect 1: OutboxNotInitializedError was thrown on every message, with no pause.
  it('before its OutboxModule is initialized: pauses the partition and asks for redelivery', async () => {
    const call = new OrderEvents().below({}, kafkaContext()) as unknown as Promise<unknown>;
    const error: unknown = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConsumerRetryError);
    expect((error as ConsumerRetryError).pausedForMs).toBe(1000);
    expect(consumer.pause).toHaveBeenCalledWith([{ topic: 'Order', partitions: [2] }]);
  });

  it('refuses a call without a KafkaContext', async () => {
    bindAll();
    await expect(new OrderEvents().undecorated({}, undefined as never)).rejects.toMatchObject({
      code: 'OUTBOX_IDEMPOTENT_HANDLER_NO_CONTEXT',
    });
  });

  describe('its exception filter', () => {
    it('rethrows a ConsumerRetryError so that kafkajs delivers the message again', async () => {
      bindAll();
      const retry = new ConsumerRetryError('again', {});
      await expect(
        lastValueFrom(filterOf('below').catch(retry, rpcHost({}, kafkaContext())) as never),
      ).rejects.toBe(retry);
    });

    // Defect 1: a pipe or guard rejection never reached the idempotent wrapper.
    it('hands a rejection from before the method (guard, pipe) to the runtime, then acknowledges', async () => {
      bindAll();
      const rejection = new Error('rejected by a pipe');
      await expect(
        lastValueFrom(filterOf('below').catch(rejection, rpcHost({}, kafkaContext())) as never),
      ).resolves.toBeUndefined();
      expect(runtime.rejections).toEqual([rejection]);
    });

    it('acknowledges an error raised after the delivery ended (an interceptor after the handler)', async () => {
      bindAll();
      const ctx = kafkaContext();
      await new OrderEvents().below({}, ctx);
      await expect(
        lastValueFrom(filterOf('below').catch(new Error('late'), rpcHost({}, ctx)) as never),
      ).resolves.toBeUndefined();
      expect(runtime.rejections).toEqual([]);
    });

    it('leaves errors of non-Kafka calls alone', async () => {
      bindAll();
      const error = new Error('not ours');
      await expect(
        lastValueFrom(filterOf('below').catch(error, rpcHost({})) as never),
      ).rejects.toBe(error);
    });

    it('fails the bootstrap when no OutboxModule bound the handler', () => {
      expect(() => filterOf('above').onApplicationBootstrap()).toThrow(
        IdempotentHandlerBootstrapError,
      );
      expect(() => filterOf('above').onApplicationBootstrap()).toThrow(
        /OrderEvents\.above.*OutboxModule\.forRoot/,
      );
      bindAll();
      expect(() => filterOf('above').onApplicationBootstrap()).not.toThrow();
    });
  });

  it('refuses, when the class is defined, a @Payload() handler without @Ctx()', () => {
    expect(() => {
      class Broken {
        @EventPattern('X')
        @IdempotentHandler()
        handle(@Payload() _data: unknown) {}
      }
      return Broken;
    }).toThrow(IdempotentHandlerOptionsError);
  });

  it.each([
    [{ maxFailures: 0 }, 'maxFailures'],
    [{ handlerTimeoutMs: 10 }, 'handlerTimeoutMs'],
    [{ consumer: '' }, 'consumer'],
    [{ deadLetterTopic: 'bad topic!' }, 'deadLetterTopic'],
    [{ eventId: 'ce_id' }, 'eventId'],
    [{ validate: 'yes' }, 'validate'],
    [{ dto: 'yes' }, 'dto'],
    [{ retries: 3 }, 'retries'],
  ])('refuses bad options when the class is defined: %j', (options, option) => {
    let error: unknown;
    try {
      class Broken {
        @IdempotentHandler(options as never)
        handle(_data: unknown, _ctx: KafkaContext) {}
      }
      void Broken;
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(IdempotentHandlerOptionsError);
    expect(error).toMatchObject({ option, message: expect.stringContaining('Broken.handle') });
  });
});
