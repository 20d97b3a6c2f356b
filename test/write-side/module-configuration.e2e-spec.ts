import { Module } from '@nestjs/common';
import { getConnectionToken, MongooseModule } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import mongoose from 'mongoose';
import type { Connection } from 'mongoose';
import { OutboxModule, OutboxOptionsError } from '../../lib';
import { OUTBOX_RESOLVED_OPTIONS } from '../../lib/common/outbox.constants';
import type { ResolvedOutboxOptions } from '../../lib/options/resolved-options';
import { describeWith, mongoUriFor, uniqueName } from '../harness';
import { OrderService, OrdersModule, startWriteSideApp } from './write-side.fixtures';

@Module({
  providers: [{ provide: 'OUTBOX_CONFIG', useValue: { limit: 5000 } }],
  exports: ['OUTBOX_CONFIG'],
})
class ConfigModule {}

describeWith(['mongodb'], 'OutboxModule configuration', () => {
  it('forRootAsync + isGlobal + a named connection and custom collection', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        MongooseModule.forRoot(mongoUriFor(uniqueName('ws')), { connectionName: 'shop' }),
        OutboxModule.forRootAsync({
          isGlobal: true,
          connectionName: 'shop',
          imports: [ConfigModule],
          inject: ['OUTBOX_CONFIG'],
          useFactory: (config: { limit: number }) => ({
            collections: { outbox: 'shop_outbox' },
            maxPayloadBytes: config.limit,
            relay: false,
          }),
        }),
      ],
    }).compile();
    const app = await moduleRef.init();
    const connection = app.get<Connection>(getConnectionToken('shop'));
    try {
      expect(app.get<ResolvedOutboxOptions>(OUTBOX_RESOLVED_OPTIONS)).toMatchObject({
        connectionName: 'shop',
        maxPayloadBytes: 5000,
      });
      const indexes = await connection.collection('shop_outbox').indexes();
      expect(indexes.some((i) => i.unique && i.key.eventId === 1)).toBe(true);
    } finally {
      await connection.dropDatabase().catch(() => undefined);
      await app.close();
    }
  });

  it('the global module lets a feature module inject OutboxEmitter', async () => {
    const ctx = await startWriteSideApp({ collections: { outbox: 'events_out' } });
    try {
      expect(ctx.app.get(OrderService)).toBeInstanceOf(OrderService);
      await ctx.orders.create('o-1', 1);
      expect(await ctx.outbox()).toHaveLength(1);
      expect(await ctx.connection.collection('outbox').countDocuments()).toBe(0);
    } finally {
      await ctx.close();
    }
  });

  it('bad options fail the bootstrap with OutboxOptionsError naming the option', async () => {
    const build = Test.createTestingModule({
      imports: [
        MongooseModule.forRoot(mongoUriFor(uniqueName('ws'))),
        OutboxModule.forRoot({
          isGlobal: true,
          relay: false,
          collections: { outbox: 'bad$name' },
        }),
        OrdersModule,
      ],
    }).compile();
    const error = await build.catch((e: unknown) => e);
    // No app exists to close: close the connection MongooseModule opened before the failure.
    await Promise.all(mongoose.connections.map((c) => c.close().catch(() => undefined)));
    expect(error).toBeInstanceOf(OutboxOptionsError);
    expect((error as OutboxOptionsError).option).toBe('collections.outbox');
  });

  it('createIndexes: false leaves the outbox without the unique index', async () => {
    const ctx = await startWriteSideApp({
      createIndexes: false,
      collections: { outbox: 'no_idx' },
    });
    try {
      const exists = (await ctx.connection.db!.listCollections({ name: 'no_idx' }).toArray())
        .length;
      if (exists) {
        const indexes = await ctx.connection.collection('no_idx').indexes();
        expect(indexes.some((i) => i.key.eventId === 1)).toBe(false);
      }
    } finally {
      await ctx.close();
    }
  });
});
