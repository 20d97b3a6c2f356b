import { Inject, Injectable } from '@nestjs/common';
import { OutboxError } from './common/errors/outbox.error';
import { IdempotentHandlerRuntime } from './consumer/nest/idempotent-handler.runtime';
import { OUTBOX_EVENT_WRITER, type OutboxEventWriter } from './events/outbox-event.writer';
import { resolveTarget, targetOf, type TenantTarget } from './tenants/tenant.resolution';
import {
  OUTBOX_TENANTS_OPTIONS,
  type ResolvedTenantsOptions,
  type TenantsSetting,
} from './tenants/tenants.resolved';

/**
 * The `tenants` option at work, for the application: the current tenant, a tenant's database,
 * and `ensureTenantIndexes(tenant)` to call when a tenant is onboarded (otherwise the first write
 * of this process to a tenant database creates them).
 */
@Injectable()
export class OutboxTenants {
  constructor(
    @Inject(OUTBOX_TENANTS_OPTIONS) private readonly tenants: TenantsSetting,
    @Inject(OUTBOX_EVENT_WRITER) private readonly writer: OutboxEventWriter,
    private readonly consumers: IdempotentHandlerRuntime,
  ) {}

  /** Whether the module has the `tenants` option. */
  get enabled(): boolean {
    return this.tenants !== false;
  }

  /** The tenant of the running call (`tenants.resolve`), or undefined. */
  current(): string | undefined {
    return this.tenants ? this.tenants.resolve() : undefined;
  }

  /** The current tenant and its database; throws `OutboxTenantNotResolvedError` without one. */
  currentTarget(what = 'OutboxTenants.currentTarget()'): TenantTarget {
    return resolveTarget(this.options(), what);
  }

  /** `databaseOf(tenant)`, checked (throws `OutboxTenantNotResolvedError` for an unusable name). */
  databaseOf(tenant: string): string {
    return targetOf(this.options(), tenant, 'OutboxTenants.databaseOf()').database;
  }

  /**
   * Creates the write side's indexes (outbox, counters) and the consumer's (processed records,
   * consumer dead letters) in the tenant's database. Idempotent; call it when onboarding a tenant.
   */
  async ensureTenantIndexes(tenant: string): Promise<void> {
    const database = this.databaseOf(tenant);
    await this.writer.ensureIndexes(database);
    await this.consumers.prepareDatabase(database);
  }

  private options(): ResolvedTenantsOptions {
    if (!this.tenants) {
      throw new OutboxError(
        'OutboxTenants: the module has no tenants option. Give OutboxModule.forRoot({ tenants: { databases } }).',
        'OUTBOX_NO_TENANTS',
      );
    }
    return this.tenants;
  }
}
