import { Injectable, Module } from '@nestjs/common';
import { getConnectionToken } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import { FakeConnection, FakeOutboxWriter } from './testing/fakes/fake-connection';
import { compileFakeOutboxApp } from './testing/fakes/fake-outbox-app';
import { OutboxOptionsError } from './common/errors/outbox-options.error';
import {
  OUTBOX_CONSUMER_OPTIONS,
  OUTBOX_EVENTS_OPTIONS,
  OUTBOX_RELAY_OPTIONS,
  OUTBOX_RESOLVED_OPTIONS,
  OUTBOX_STORAGE_OPTIONS,
} from './common/outbox.constants';
import { OutboxEmitter } from './events/outbox.emitter';
import { OUTBOX_EVENT_WRITER } from './events/outbox-event.writer';
import type { ResolvedOutboxOptions } from './options/resolved-options';
import { OutboxModule } from './outbox.module';
import { OutboxNotInitializedError } from './transaction/errors/outbox-not-initialized.error';
import { OutboxReplicaSetRequiredError } from './transaction/errors/outbox-replica-set-required.error';
import { TransactionRunner } from './transaction/transaction.runner';
import { OutboxRuntimeHost } from './transaction/transaction-runtime.host';
import { InjectOutboxEmitter } from './injection/outbox-inject.decorators';
import { Transactional } from './transaction/transactional.decorator';

@Injectable()
class PlaceOrder {
  constructor(private readonly emitter: OutboxEmitter) {}

  @Transactional()
  async run(id: string): Promise<string> {
    return this.emitter.emit({
      eventType: 'OrderPlaced',
      aggregateType: 'Order',
      aggregateId: id,
      payload: { id },
    });
  }
}

describe('OutboxModule bootstrap', () => {
  afterEach(() => OutboxRuntimeHost.reset());

  it('fails compile() with OutboxOptionsError for bad options', async () => {
    const error = await compileFakeOutboxApp({ maxPayloadBytes: -1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboxOptionsError);
    expect((error as OutboxOptionsError).option).toBe('maxPayloadBytes');
  });

  it('fails compile() for an unknown option key', async () => {
    const options = { relay: false, colections: {} } as unknown as Parameters<
      typeof compileFakeOutboxApp
    >[0];
    await expect(compileFakeOutboxApp(options)).rejects.toThrow(
      /"colections": is not a known option/,
    );
  });

  it('fails init() on a standalone server, saying how to start a replica set', async () => {
    const connection = new FakeConnection();
    connection.hello = { isWritablePrimary: true };
    const { app } = await compileFakeOutboxApp({}, [], connection);
    const error = await app.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboxReplicaSetRequiredError);
    expect((error as Error).message).toMatch(/--replSet rs0/);
    // close() re-awaits the failed init: expect the same error again, nothing else.
    await expect(app.close()).rejects.toBe(error);
  });

  it('accepts a sharded cluster (mongos)', async () => {
    const connection = new FakeConnection();
    connection.hello = { msg: 'isdbgrid' };
    const { app } = await compileFakeOutboxApp({}, [], connection);
    await expect(app.init()).resolves.toBeDefined();
    await app.close();
  });

  it("switches on Mongoose's transactionAsyncLocalStorage when the app did not", async () => {
    const connection = new FakeConnection({ alsEnabled: false });
    const { app } = await compileFakeOutboxApp({}, [], connection);
    await app.init();
    expect(connection.settings.get('transactionAsyncLocalStorage')).toBe(true);
    expect(connection.base.transactionAsyncLocalStorage).toBeDefined();
    await app.close();
  });

  it('creates the indexes unless createIndexes is false', async () => {
    const first = await compileFakeOutboxApp();
    await first.app.init();
    expect(first.writer.indexesEnsured).toBe(1);
    await first.app.close();
    const second = await compileFakeOutboxApp({ createIndexes: false });
    await second.app.init();
    expect(second.writer.indexesEnsured).toBe(0);
    await second.app.close();
  });

  it('connects @Transactional methods at init and disconnects them at close', async () => {
    const { app, connection } = await compileFakeOutboxApp({}, [PlaceOrder]);
    const service = app.get(PlaceOrder);
    await expect(service.run('o1')).rejects.toThrow(OutboxNotInitializedError);
    await app.init();
    await service.run('o1');
    expect(connection.docs('outbox')).toMatchObject([
      { eventType: 'OrderPlaced', aggregateId: 'o1' },
    ]);
    await app.close();
    await expect(service.run('o2')).rejects.toThrow(OutboxNotInitializedError);
  });

  it('exports OutboxEmitter, TransactionRunner and the resolved options', async () => {
    const { app } = await compileFakeOutboxApp({ maxPayloadBytes: 1234 });
    expect(app.get(OutboxEmitter)).toBeInstanceOf(OutboxEmitter);
    expect(app.get(TransactionRunner)).toBeInstanceOf(TransactionRunner);
    expect(app.get<ResolvedOutboxOptions>(OUTBOX_RESOLVED_OPTIONS).maxPayloadBytes).toBe(1234);
    await app.close();
  });

  it('forRootAsync + isGlobal + a named connection: its OutboxEmitter injectable in another module', async () => {
    const connection = new FakeConnection();
    @Injectable()
    class PlaceNamedOrder extends PlaceOrder {
      constructor(@InjectOutboxEmitter('orders') emitter: OutboxEmitter) {
        super(emitter);
      }
      @Transactional({ connectionName: 'orders' })
      override async run(id: string): Promise<string> {
        return super.run(id);
      }
    }
    @Module({ providers: [PlaceNamedOrder], exports: [PlaceNamedOrder] })
    class OrdersModule {}
    @Module({ providers: [{ provide: 'CONFIG', useValue: { limit: 4321 } }], exports: ['CONFIG'] })
    class ConfigModule {}

    const app = await Test.createTestingModule({
      imports: [
        OutboxModule.forRootAsync({
          isGlobal: true,
          connectionName: 'orders',
          imports: [ConfigModule],
          inject: ['CONFIG'],
          useFactory: (config: { limit: number }) => ({
            maxPayloadBytes: config.limit,
            relay: false,
          }),
        }),
        OrdersModule,
      ],
      providers: [{ provide: getConnectionToken('orders'), useValue: connection }],
    })
      .overrideProvider(OUTBOX_EVENT_WRITER)
      .useValue(new FakeOutboxWriter())
      .compile();
    await app.init();
    expect(app.get<ResolvedOutboxOptions>(OUTBOX_RESOLVED_OPTIONS)).toMatchObject({
      connectionName: 'orders',
      maxPayloadBytes: 4321,
    });
    await app.get(PlaceNamedOrder).run('o9');
    expect(connection.docs('outbox')).toHaveLength(1);
    await app.close();
  });

  it("gives each feature its slice of the resolved options, under the slice's own token", async () => {
    const { app } = await compileFakeOutboxApp({
      maxPayloadBytes: 1234,
      collections: { outbox: 'events' },
      consumer: { maxFailures: 2 },
    });
    const resolved = app.get<ResolvedOutboxOptions>(OUTBOX_RESOLVED_OPTIONS);
    expect(app.get(OUTBOX_STORAGE_OPTIONS)).toEqual({
      collections: resolved.collections,
      createIndexes: resolved.createIndexes,
    });
    expect(app.get(OUTBOX_STORAGE_OPTIONS).collections.outbox).toBe('events');
    expect(app.get(OUTBOX_EVENTS_OPTIONS)).toEqual({
      maxPayloadBytes: 1234,
      allowBigInt: false,
      aggregateSequence: false,
      scheduledEvents: false,
    });
    expect(app.get(OUTBOX_RELAY_OPTIONS)).toBe(resolved.relay);
    expect(app.get(OUTBOX_CONSUMER_OPTIONS)).toBe(resolved.consumer);
    expect(app.get(OUTBOX_CONSUMER_OPTIONS).maxFailures).toBe(2);
    await app.close();
  });

  it('forRootAsync fails bootstrap when the factory returns bad options', async () => {
    const build = Test.createTestingModule({
      imports: [
        OutboxModule.forRootAsync({
          useFactory: () => ({ relay: false, collections: { outbox: 'system.outbox' } }),
        }),
      ],
      providers: [{ provide: getConnectionToken(), useValue: new FakeConnection() }],
    }).compile();
    await expect(build).rejects.toThrow(OutboxOptionsError);
  });
});
