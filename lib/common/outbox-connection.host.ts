import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import { OutboxError } from './errors/outbox.error';
import { OUTBOX_STORAGE_OPTIONS } from './outbox.constants';
import type { OutboxStorageOptions } from './outbox-storage.options';

/**
 * Holds the app's own Mongoose connection (the default one, or `connectionName`).
 * Resolved in `onModuleInit`, when every module's providers exist, so it works with
 * `forRoot` and `forRootAsync` alike. The library never opens a connection of its own.
 */
@Injectable()
export class OutboxConnectionHost implements OnModuleInit {
  private resolved?: Connection;

  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(OUTBOX_STORAGE_OPTIONS) private readonly options: OutboxStorageOptions,
  ) {}

  onModuleInit(): void {
    this.resolve();
  }

  get connection(): Connection {
    return this.resolved ?? this.resolve();
  }

  private resolve(): Connection {
    const token = getConnectionToken(this.options.connectionName);
    try {
      this.resolved = this.moduleRef.get<Connection>(token, { strict: false });
    } catch {
      const name = this.options.connectionName ?? '(default)';
      throw new OutboxError(
        `OutboxModule found no Mongoose connection ${name}. Import MongooseModule.forRoot(...)` +
          (this.options.connectionName ? ` with connectionName: '${name}'` : '') +
          ' in the application module, or set the "connectionName" option to an existing connection.',
        'OUTBOX_NO_CONNECTION',
        { connectionName: name },
      );
    }
    return this.resolved;
  }
}
