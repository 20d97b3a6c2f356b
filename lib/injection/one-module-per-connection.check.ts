import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { OutboxOptionsError } from '../common/errors/outbox-options.error';
import { OUTBOX_STORAGE_OPTIONS } from '../common/outbox.constants';
import type { OutboxStorageOptions } from '../common/outbox-storage.options';

/**
 * Fails the bootstrap when the application holds two OutboxModules on the same Mongoose
 * connection: their services would share one token, and which one a provider gets would depend on
 * module order (two global `forRoot()`s silently resolving to one emitter).
 */
@Injectable()
export class OneModulePerConnectionCheck implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    @Inject(OUTBOX_STORAGE_OPTIONS) private readonly options: OutboxStorageOptions,
  ) {}

  onModuleInit(): void {
    const name = this.options.connectionName;
    const modules = this.discovery
      .getProviders()
      .filter(
        (wrapper) =>
          wrapper.token === OUTBOX_STORAGE_OPTIONS &&
          (wrapper.instance as OutboxStorageOptions | undefined)?.connectionName === name,
      );
    if (modules.length > 1) {
      throw new OutboxOptionsError(
        'connectionName',
        `${modules.length} OutboxModules in this application use the ${name === undefined ? 'default' : `'${name}'`} connection`,
        'Import OutboxModule.forRoot()/forRootAsync() once per Mongoose connection (isGlobal: true makes its services reach every module); for a second database, give its OutboxModule that connectionName and inject its services with @InjectOutboxEmitter(name) / @InjectTransactionRunner(name).',
      );
    }
  }
}
