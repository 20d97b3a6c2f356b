import 'reflect-metadata';
import { Controller, Injectable, Logger, type Type } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { EventPattern, KafkaContext } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { IDEMPOTENT_HANDLER_METADATA } from '../../common/outbox.constants';
import { IdempotentHandlerBootstrapError } from '../consumer.errors';
import { IdempotentHandlerBindings } from './idempotent-handler.bindings';
import { IdempotentHandler } from './idempotent-handler.decorator';
import { IdempotentHandlerExplorer } from './idempotent-handler.explorer';
import { IdempotentHandlerMetadataAccessor } from './idempotent-handler.metadata-accessor';
import { IdempotentHandlerRuntime } from './idempotent-handler.runtime';

/** A runtime without MongoDB: only what the explorer asks of it. */
function fakeRuntime(connectionName?: string, hasIndex = true) {
  const runtime = Object.create(IdempotentHandlerRuntime.prototype) as IdempotentHandlerRuntime;
  Object.defineProperty(runtime, 'options', { value: { connectionName } });
  Object.defineProperty(runtime, 'processedEventsCollection', { value: 'outbox_processed_events' });
  const prepare = jest.fn(async () => hasIndex);
  Object.defineProperty(runtime, 'prepare', { value: prepare });
  return { runtime, prepare };
}

@Controller()
class Orders {
  @EventPattern('OrderPlaced')
  @IdempotentHandler({ consumer: 'orders' })
  onPlaced(_p: unknown, _ctx: KafkaContext) {}
}

@Controller()
class Billing {
  @EventPattern('OrderPlaced')
  @IdempotentHandler({ consumer: 'billing', connectionName: 'billing' })
  onPlaced(_p: unknown, _ctx: KafkaContext) {}
}

@Controller()
class AlsoOrders {
  @EventPattern('OrderCancelled')
  @IdempotentHandler({ consumer: 'orders' })
  onCancelled(_p: unknown, _ctx: KafkaContext) {}
}

@Injectable()
class NotAController {
  @IdempotentHandler({ consumer: 'provider' })
  onPlaced(_p: unknown, _ctx: KafkaContext) {}
}

const settingsOf = (type: Type<unknown>, method: string) =>
  Reflect.getMetadata(
    IDEMPOTENT_HANDLER_METADATA,
    (type.prototype as Record<string, object>)[method],
  );

/** One application with the explorer of one OutboxModule (the others given as runtimes only). */
async function explore(
  controllers: Type<unknown>[],
  runtime: IdempotentHandlerRuntime,
  others: IdempotentHandlerRuntime[] = [],
  providers: Type<unknown>[] = [],
) {
  const moduleRef = await Test.createTestingModule({
    controllers,
    providers: [
      DiscoveryService,
      MetadataScanner,
      IdempotentHandlerMetadataAccessor,
      IdempotentHandlerExplorer,
      { provide: IdempotentHandlerRuntime, useValue: runtime },
      ...others.map((other, i) => ({ provide: `other-${i}`, useValue: other })),
      ...providers,
    ],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

describe('the @IdempotentHandler explorer (no MongoDB)', () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('binds the handlers of its connection, prepares the collections, unbinds on shutdown', async () => {
    const own = fakeRuntime();
    const billing = fakeRuntime('billing');
    // Billing's handler belongs to the other module, whose own explorer binds it (as here).
    IdempotentHandlerBindings.bind(settingsOf(Billing, 'onPlaced'), billing.runtime);
    const app = await explore([Orders, Billing], own.runtime, [billing.runtime]);
    expect(IdempotentHandlerBindings.resolve(settingsOf(Orders, 'onPlaced'))).toBe(own.runtime);
    expect(IdempotentHandlerBindings.resolve(settingsOf(Billing, 'onPlaced'))).toBe(
      billing.runtime,
    );
    expect(own.prepare).toHaveBeenCalledTimes(1);
    await app.close();
    expect(IdempotentHandlerBindings.resolve(settingsOf(Orders, 'onPlaced'))).toBeUndefined();
    IdempotentHandlerBindings.unbind(settingsOf(Billing, 'onPlaced'), billing.runtime);
  });

  it('serves handlers without connectionName when it is the only module', async () => {
    const only = fakeRuntime('shop');
    const app = await explore([Orders], only.runtime);
    expect(IdempotentHandlerBindings.resolve(settingsOf(Orders, 'onPlaced'))).toBe(only.runtime);
    await app.close();
  });

  it.each([
    [
      'a handler on a provider',
      [Orders],
      [NotAController],
      'not-a-controller',
      'NotAController.onPlaced',
    ],
    [
      'two handlers named "orders"',
      [Orders, AlsoOrders],
      [],
      'duplicate-consumer',
      'AlsoOrders.onCancelled',
    ],
    ['a connectionName no module serves', [Billing], [], 'unknown-connection', 'Billing.onPlaced'],
  ] as const)(
    'fails the bootstrap on %s',
    async (_what, controllers, providers, problem, handler) => {
      const error = await explore([...controllers], fakeRuntime().runtime, [], [...providers]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(IdempotentHandlerBootstrapError);
      expect(error).toMatchObject({ problem });
      expect((error as Error).message).toContain(handler);
    },
  );

  it('fails the bootstrap when the unique index is missing (createIndexes: false)', async () => {
    const error = await explore([Orders], fakeRuntime(undefined, false).runtime).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ problem: 'missing-unique-index' });
  });

  it('does nothing for an application without handlers', async () => {
    const none = fakeRuntime();
    const app = await explore([], none.runtime);
    expect(none.prepare).not.toHaveBeenCalled();
    await app.close();
  });
});
