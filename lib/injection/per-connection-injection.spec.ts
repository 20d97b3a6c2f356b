import { Injectable, Module } from '@nestjs/common';
import { getConnectionToken } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import { FakeConnection, FakeOutboxWriter } from '../../test/write-side/fakes/fake-connection';
import { OutboxOptionsError } from '../common/errors/outbox-options.error';
import { OUTBOX_EVENT_WRITER } from '../events/outbox-event.writer';
import { OutboxEmitter } from '../events/outbox.emitter';
import { OutboxModule } from '../outbox.module';
import { TransactionRunner } from '../transaction/transaction.runner';
import { OutboxRuntimeHost } from '../transaction/transaction-runtime.host';
import { InjectOutboxEmitter, InjectTransactionRunner } from './outbox-inject.decorators';
import {
  getOutboxEmitterToken,
  getOutboxToken,
  getTransactionRunnerToken,
} from './outbox-token.utils';

const event = (id: string) => ({
  eventType: 'Placed',
  aggregateType: 'Order',
  aggregateId: id,
  payload: { id },
});

@Injectable()
class Shop {
  constructor(
    readonly emitter: OutboxEmitter,
    readonly runner: TransactionRunner,
  ) {}
}

@Injectable()
class Billing {
  constructor(
    @InjectOutboxEmitter('billing') readonly emitter: OutboxEmitter,
    @InjectTransactionRunner('billing') readonly runner: TransactionRunner,
  ) {}
}

@Module({ providers: [Shop, Billing], exports: [Shop, Billing] })
class FeatureModule {}

/** Two databases, two OutboxModules: each service reaches the module of its own connection. */
describe('per-connection injection', () => {
  afterEach(() => OutboxRuntimeHost.reset());

  it('follows @nestjs/mongoose: the class for the default connection, a named token otherwise', () => {
    expect(getOutboxEmitterToken()).toBe(OutboxEmitter);
    expect(getTransactionRunnerToken()).toBe(TransactionRunner);
    expect(getOutboxEmitterToken('billing')).toBe('billingConnection/OutboxEmitter');
    expect(getTransactionRunnerToken('billing')).toBe('billingConnection/TransactionRunner');
    expect(getOutboxToken(OutboxEmitter, 'billing')).toBe(getOutboxEmitterToken('billing'));
  });

  it('two global modules: plain and @InjectOutboxEmitter(name) injection get each its own', async () => {
    const shopDb = new FakeConnection();
    const billingDb = new FakeConnection();
    const app = await Test.createTestingModule({
      imports: [
        OutboxModule.forRoot({ isGlobal: true, relay: false }),
        OutboxModule.forRootAsync({
          isGlobal: true,
          connectionName: 'billing',
          useFactory: () => ({ relay: false }),
        }),
        FeatureModule,
      ],
      providers: [
        { provide: getConnectionToken(), useValue: shopDb },
        { provide: getConnectionToken('billing'), useValue: billingDb },
      ],
    })
      .overrideProvider(OUTBOX_EVENT_WRITER)
      .useFactory({ factory: () => new FakeOutboxWriter() })
      .compile();
    await app.init();
    try {
      const shop = app.get(Shop);
      const billing = app.get(Billing);
      expect(billing.emitter).not.toBe(shop.emitter);
      expect(billing.runner).not.toBe(shop.runner);
      expect(app.get(getOutboxEmitterToken('billing'))).toBe(billing.emitter);

      await shop.runner.run(async () => shop.emitter.emit(event('s1')));
      await billing.runner.run(async () => billing.emitter.emit(event('b1')));
      expect(shopDb.docs('outbox').map((d) => d.aggregateId)).toEqual(['s1']);
      expect(billingDb.docs('outbox').map((d) => d.aggregateId)).toEqual(['b1']);
    } finally {
      await app.close();
    }
  });

  it('a named module does not answer to the plain class: no silent fallback to another database', async () => {
    const build = Test.createTestingModule({
      imports: [
        OutboxModule.forRoot({ isGlobal: true, connectionName: 'billing', relay: false }),
        FeatureModule,
      ],
      providers: [{ provide: getConnectionToken('billing'), useValue: new FakeConnection() }],
    }).compile();
    await expect(build).rejects.toThrow(/OutboxEmitter/);
  });

  it('two modules on one connection fail the bootstrap, naming the connection and the fix', async () => {
    const app = await Test.createTestingModule({
      imports: [
        OutboxModule.forRoot({ isGlobal: true, relay: false }),
        OutboxModule.forRoot({ isGlobal: true, relay: false, maxPayloadBytes: 1000 }),
      ],
      providers: [{ provide: getConnectionToken(), useValue: new FakeConnection() }],
    })
      .overrideProvider(OUTBOX_EVENT_WRITER)
      .useFactory({ factory: () => new FakeOutboxWriter() })
      .compile();
    const error = await app.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboxOptionsError);
    expect((error as Error).message).toMatch(
      /2 OutboxModules in this application use the default connection/,
    );
    expect((error as Error).message).toMatch(/@InjectOutboxEmitter\(name\)/);
    await app.close().catch(() => undefined);
  });

  it('refuses a connectionName returned by the forRootAsync factory, where it cannot name the tokens', async () => {
    const build = Test.createTestingModule({
      imports: [
        OutboxModule.forRootAsync({
          useFactory: () => ({ connectionName: 'billing', relay: false }) as never,
        }),
      ],
      providers: [{ provide: getConnectionToken(), useValue: new FakeConnection() }],
    }).compile();
    await expect(build).rejects.toThrow(
      /give it to OutboxModule\.forRootAsync\(\{ connectionName/i,
    );
  });
});
