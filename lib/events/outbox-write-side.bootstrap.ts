import {
  Inject,
  Injectable,
  Logger,
  OnModuleDestroy,
  OnModuleInit,
  Optional,
} from '@nestjs/common';
import { OutboxConnectionHost } from '../common/outbox-connection.host';
import { OUTBOX_STORAGE_OPTIONS } from '../common/outbox.constants';
import type { OutboxStorageOptions } from '../common/outbox-storage.options';
import { OutboxReplicaSetRequiredError } from '../transaction/errors/outbox-replica-set-required.error';
import { registerConnectionSessions } from '../transaction/connection-session.plugin';
import { enableTransactionStorage } from '../transaction/mongoose-transaction-storage';
import { TransactionRunner } from '../transaction/transaction.runner';
import { OutboxRuntimeHost, type OutboxRuntime } from '../transaction/transaction-runtime.host';
import { resolveDeclaredEvents } from './declared-event.resolver';
import type { DeclaredEvent } from './emits-event.interface';
import { OUTBOX_EVENT_WRITER, type OutboxEventWriter } from './outbox-event.writer';
import { OutboxEmitter } from './outbox.emitter';
import { OUTBOX_TENANTS_OPTIONS, type TenantsSetting } from '../tenants/tenants.resolved';

/**
 * Readies the write side in `onModuleInit` (before the importing modules' own hooks):
 * 1. the server must be a replica set or a sharded cluster (transactions, change streams);
 * 2. Mongoose's `transactionAsyncLocalStorage` is switched on if the app did not do it, so models
 *    used in `@Transactional()` methods join the transaction without a `session` option;
 * 3. the outbox indexes are created (`createIndexes` option), with `tenants` also in each tenant
 *    database the `databases` option lists (a function or a pattern: at each database's first
 *    write, or by `OutboxTenants.ensureTenantIndexes`);
 * 4. `@Transactional()` / `@EmitsEvent()` methods are connected to this module.
 * Step 4 is undone in `onModuleDestroy`.
 */
@Injectable()
export class OutboxWriteSideBootstrap implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(OutboxWriteSideBootstrap.name);
  private runtime?: OutboxRuntime;

  constructor(
    private readonly host: OutboxConnectionHost,
    private readonly runner: TransactionRunner,
    private readonly emitter: OutboxEmitter,
    @Inject(OUTBOX_EVENT_WRITER) private readonly writer: OutboxEventWriter,
    @Inject(OUTBOX_STORAGE_OPTIONS) private readonly options: OutboxStorageOptions,
    @Optional() @Inject(OUTBOX_TENANTS_OPTIONS) private readonly tenants: TenantsSetting = false,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.checkTopology();
    this.enableTransactionStorage();
    if (this.options.createIndexes) {
      await this.writer.ensureIndexes();
      const listed =
        this.tenants && Array.isArray(this.tenants.databases) ? this.tenants.databases : [];
      for (const database of listed as readonly string[]) await this.writer.ensureIndexes(database);
    }
    this.runtime = {
      runner: this.runner,
      emitDeclared: (declared, result, args) => {
        this.emitter.emitEach(resolveDeclaredEvents(declared as DeclaredEvent[], result, args));
      },
    };
    OutboxRuntimeHost.bind(this.options.connectionName, this.runtime);
  }

  onModuleDestroy(): void {
    if (this.runtime) {
      OutboxRuntimeHost.unbind(this.options.connectionName, this.runtime);
      this.runtime = undefined;
    }
  }

  private async checkTopology(): Promise<void> {
    const connection = this.host.connection;
    if (connection.readyState !== 1) await connection.asPromise();
    const hello = (await connection.db!.command({ hello: 1 })) as {
      setName?: string;
      msg?: string;
    };
    if (!hello.setName && hello.msg !== 'isdbgrid') {
      throw new OutboxReplicaSetRequiredError(this.options.connectionName);
    }
  }

  private enableTransactionStorage(): void {
    // An app with a Mongoose instance of its own (not the default one) gets the plugin here.
    registerConnectionSessions(this.host.connection.base);
    // Mongoose reads the storage at every operation, so enabling it now covers existing models.
    if (!enableTransactionStorage(this.host.connection)) return;
    this.logger.log(
      "Enabled Mongoose's transactionAsyncLocalStorage, so models used in @Transactional() methods join the transaction. " +
        "Set it yourself (mongoose.set('transactionAsyncLocalStorage', true)) to silence this message.",
    );
  }
}
