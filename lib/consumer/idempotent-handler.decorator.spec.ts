import 'reflect-metadata';
import { Controller } from '@nestjs/common';
import { PATTERN_HANDLER_METADATA, PATTERN_METADATA } from '@nestjs/microservices/constants';
import { Ctx, EventPattern, KafkaContext, Payload } from '@nestjs/microservices';
import { IDEMPOTENT_HANDLER_METADATA } from '../common/outbox.constants';
import { OutboxNotInitializedError } from '../transaction/errors/outbox-not-initialized.error';
import type { ConsumedMessage } from './consumed-message';
import { IdempotentHandlerOptionsError } from './errors/idempotent-handler-options.error';
import { IdempotentHandlerHost, type IdempotentHandlerRuntimeApi } from './idempotent-handler.host';
import { IdempotentHandler } from './idempotent-handler.decorator';
import type { IdempotentHandlerSettings } from './idempotent-handler.options';

/** A runtime that applies everything: shows what the wrapper hands over and returns. */
class RecordingRuntime implements IdempotentHandlerRuntimeApi {
  calls: Array<{
    message: ConsumedMessage;
    settings: IdempotentHandlerSettings;
    producer: unknown;
  }> = [];
  payload: unknown = { orderId: 'sanitized' };
  kind: 'applied' | 'duplicate' = 'applied';

  async consume(
    message: ConsumedMessage,
    settings: IdempotentHandlerSettings,
    invoke: (payload: unknown) => unknown,
    producer: unknown,
  ) {
    this.calls.push({ message, settings, producer });
    if (this.kind === 'duplicate') return { kind: 'duplicate' as const, eventId: 'e-1' };
    return { kind: 'applied' as const, result: await invoke(this.payload) };
  }
}

const producer = { send: jest.fn() };
function kafkaContext(value: unknown = { orderId: 'from-nest' }): KafkaContext {
  return new KafkaContext([
    { key: 'o-1', value, headers: { ce_id: 'e-1' }, offset: '5', timestamp: '1' },
    2,
    'Order',
    {},
    async () => undefined,
    producer,
  ] as never);
}

describe('@IdempotentHandler decorator', () => {
  let runtime: RecordingRuntime;
  beforeEach(() => {
    IdempotentHandlerHost.reset();
    runtime = new RecordingRuntime();
  });
  afterAll(() => IdempotentHandlerHost.reset());

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

  it.each(['below', 'above'] as const)(
    'keeps @EventPattern metadata whichever order the decorators are in (%s)',
    (method) => {
      const fn = OrderEvents.prototype[method];
      expect(Reflect.getMetadata(PATTERN_METADATA, fn)).toEqual([
        method === 'below' ? 'OrderPlaced' : 'OrderPaid',
      ]);
      expect(Reflect.getMetadata(PATTERN_HANDLER_METADATA, fn)).toBeDefined();
      expect(Reflect.getMetadata(IDEMPOTENT_HANDLER_METADATA, fn)).toMatchObject({
        handler: `OrderEvents.${method}`,
      });
      expect(fn.name).toBe(method);
    },
  );

  it('names the consumer ClassName.method unless told otherwise', () => {
    expect(
      Reflect.getMetadata(IDEMPOTENT_HANDLER_METADATA, OrderEvents.prototype.below),
    ).toMatchObject({
      consumer: 'OrderEvents.below',
    });
    expect(
      Reflect.getMetadata(IDEMPOTENT_HANDLER_METADATA, OrderEvents.prototype.above),
    ).toMatchObject({
      consumer: 'billing.orders',
    });
  });

  it('fails with OutboxNotInitializedError before OutboxModule is initialized', async () => {
    await expect(new OrderEvents().below({}, kafkaContext())).rejects.toBeInstanceOf(
      OutboxNotInitializedError,
    );
  });

  it('replaces Nest data with the decoded payload, keeps `this` and the context', async () => {
    IdempotentHandlerHost.register(undefined, runtime);
    const events = new OrderEvents();
    const ctx = kafkaContext();
    await expect(events.below({ orderId: 'from-nest' }, ctx)).resolves.toBe('below');
    expect(events.seen).toEqual([[{ orderId: 'sanitized' }, ctx]]);
    expect(runtime.calls[0].message).toMatchObject({
      topic: 'Order',
      partition: 2,
      offset: '5',
      key: 'o-1',
      headers: { ce_id: 'e-1' },
      value: { orderId: 'from-nest' },
    });
    expect(runtime.calls[0].producer).toBe(producer);
  });

  it('works without parameter decorators (Nest passes data, context)', async () => {
    IdempotentHandlerHost.register(undefined, runtime);
    const events = new OrderEvents();
    const ctx = kafkaContext();
    await events.undecorated({ raw: true }, ctx);
    expect(events.seen).toEqual([[{ orderId: 'sanitized' }, ctx]]);
  });

  it('fills @Payload(property) from the decoded payload, own properties only', async () => {
    IdempotentHandlerHost.register(undefined, runtime);
    const events = new OrderEvents();
    const ctx = kafkaContext();
    await events.byProperty(ctx, 'from-nest');
    runtime.payload = {};
    await events.byProperty(ctx, 'from-nest');
    expect(events.seen.map(([v]) => v)).toEqual(['sanitized', undefined]);
  });

  it('returns undefined for an event already applied', async () => {
    IdempotentHandlerHost.register(undefined, runtime);
    runtime.kind = 'duplicate';
    const events = new OrderEvents();
    await expect(events.below({}, kafkaContext())).resolves.toBeUndefined();
    expect(events.seen).toEqual([]);
  });

  it('refuses a call without a KafkaContext', async () => {
    IdempotentHandlerHost.register(undefined, runtime);
    await expect(new OrderEvents().undecorated({}, undefined as never)).rejects.toMatchObject({
      code: 'OUTBOX_IDEMPOTENT_HANDLER_NO_CONTEXT',
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
    [{ consumer: '' }, 'consumer'],
    [{ deadLetterTopic: 'bad topic!' }, 'deadLetterTopic'],
    [{ eventId: 'ce_id' }, 'eventId'],
    [{ validate: 'yes' }, 'validate'],
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
