export { OutboxTenantContext, currentTenant, runInTenant } from './outbox-tenant.context';
export { OutboxTenantNotResolvedError } from './outbox-tenant-not-resolved.error';
export { TENANT_HEADER } from './tenant.header';
export type { OutboxTenantsOptions, TenantDatabases } from './tenants.options';
export type { TenantTarget } from './tenant.resolution';
