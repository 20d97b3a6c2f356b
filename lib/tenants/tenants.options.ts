export type TenantDatabases =
  readonly string[] | RegExp | (() => readonly string[] | Promise<readonly string[]>);

export interface OutboxTenantsOptions {
  /** The tenant the current call works for (from AsyncLocalStorage, a request-scoped store, ...).
   *  Default: the library's own `OutboxTenantContext` (`runInTenant(tenant, fn)`). */
  resolve?: () => string | undefined;
  /** The database of a tenant. Default: the tenant id itself. Several tenants may share one. */
  databaseOf?: (tenant: string) => string;
  /** The databases the relay follows: a list, a function (called again every sweep interval), or a
   *  pattern matched against `listDatabases` names (never every database unasked). */
  databases: TenantDatabases;
  /** The relay's change streams: one cluster-wide stream (default) or one per database. */
  stream?: 'cluster' | 'per-database';
  /** At most this many distinct `tenant` values in metric attributes; the rest are `other`. Default 100. */
  metricsTenantLimit?: number;
}
