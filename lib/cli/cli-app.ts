import { Module } from '@nestjs/common';
import type { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MongooseModule } from '@nestjs/mongoose';
import type { OutboxCollections } from '../common/outbox-storage.options';
import type { CliTenant } from './cli-flags';
import { OutboxModule } from '../outbox.module';

@Module({})
class OutboxCliModule {
  static register(
    uri: string,
    collections: Partial<OutboxCollections>,
    tenant?: CliTenant,
  ): DynamicModule {
    // With --tenant, the tenants option maps that tenant to its database (`forTenant` views).
    const tenants = tenant && {
      databases: [tenant.database],
      databaseOf: () => tenant.database,
    };
    return {
      module: OutboxCliModule,
      imports: [
        // One attempt: a wrong URI should fail now, not after Nest's retries.
        MongooseModule.forRoot(uri, {
          retryAttempts: 0,
          ...(/serverSelectionTimeoutMS=/i.test(uri) ? {} : { serverSelectionTimeoutMS: 10_000 }),
        }),
        OutboxModule.forRoot({
          relay: false,
          createIndexes: false,
          collections,
          ...(tenants ? { tenants } : {}),
        }),
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
  tenant?: CliTenant,
): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(OutboxCliModule.register(uri, collections, tenant), {
    logger: false,
    abortOnError: false,
  });
}
