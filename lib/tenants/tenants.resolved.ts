import type { TenantDatabases } from './tenants.options';

/** Injection token of `ResolvedTenantsOptions | false` (false: no `tenants` option). */
export const OUTBOX_TENANTS_OPTIONS = Symbol('outbox:tenants_options');

/** `OutboxTenantsOptions` after validation, with the defaults filled in. */
export interface ResolvedTenantsOptions {
  resolve: () => string | undefined;
  databaseOf: (tenant: string) => string;
  databases: TenantDatabases;
  stream: 'cluster' | 'per-database';
  metricsTenantLimit: number;
}

/** `false` when the module has no `tenants` option (one database, as without tenants). */
export type TenantsSetting = ResolvedTenantsOptions | false;
