import { Module } from '@nestjs/common';
import type { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MongooseModule } from '@nestjs/mongoose';
import type { OutboxCollections } from '../common/outbox-storage.options';
import { OutboxModule } from '../outbox.module';

@Module({})
class OutboxCliModule {
  static register(uri: string, collections: Partial<OutboxCollections>): DynamicModule {
    return {
      module: OutboxCliModule,
      imports: [
        // One attempt: a wrong URI should fail now, not after Nest's retries.
        MongooseModule.forRoot(uri, {
          retryAttempts: 0,
          ...(/serverSelectionTimeoutMS=/i.test(uri) ? {} : { serverSelectionTimeoutMS: 10_000 }),
        }),
        OutboxModule.forRoot({ relay: false, createIndexes: false, collections }),
      ],
    };
  }
}

/**
 * A Nest application context for one CLI command: the library's services on a connection of
 * their own to `uri` (no relay, no index creation). The caller closes it.
 */
export function openCliApp(
  uri: string,
  collections: Partial<OutboxCollections>,
): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(OutboxCliModule.register(uri, collections), {
    logger: false,
    abortOnError: false,
  });
}
