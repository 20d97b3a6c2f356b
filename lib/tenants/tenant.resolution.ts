import { showOption } from '../common/options/option.checker';
import { OutboxTenantNotResolvedError } from './outbox-tenant-not-resolved.error';
import type { ResolvedTenantsOptions } from './tenants.resolved';

/** Where a tenant's outbox rows, counters, processed records and dead letters go. */
export interface TenantTarget {
  tenant: string;
  /** `databaseOf(tenant)`: a valid MongoDB database name. */
  database: string;
}

/** Characters MongoDB refuses in a database name (any platform), and its byte limit. */
const FORBIDDEN_IN_DATABASE = /[/\\. "$*<>:|?]/;
const MAX_DATABASE_NAME_BYTES = 63;

/** Why `name` is not a usable database name, or undefined. */
export function databaseNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name === '') {
    return `expected a non-empty string, got ${showOption(name)}`;
  }
  if (Buffer.byteLength(name, 'utf8') > MAX_DATABASE_NAME_BYTES) {
    return `'${name}' is longer than ${MAX_DATABASE_NAME_BYTES} bytes`;
  }
  if (FORBIDDEN_IN_DATABASE.test(name) || name.includes('\u0000')) {
    return `'${name}' contains a character MongoDB refuses in a database name (/\\. "$*<>:|? or NUL)`;
  }
  return undefined;
}

/** The database of `tenant` (`databaseOf`), checked; throws `OutboxTenantNotResolvedError`. */
export function targetOf(
  options: ResolvedTenantsOptions,
  tenant: unknown,
  what: string,
): TenantTarget {
  if (typeof tenant !== 'string' || tenant === '') {
    throw new OutboxTenantNotResolvedError(
      what,
      tenant === undefined
        ? 'no tenant is known for this call'
        : `the tenant must be a non-empty string, got ${showOption(tenant)}`,
    );
  }
  let database: unknown;
  try {
    database = options.databaseOf(tenant);
  } catch (error) {
    throw new OutboxTenantNotResolvedError(
      what,
      `tenants.databaseOf('${tenant}') threw: ${(error as Error)?.message ?? String(error)}`,
      tenant,
    );
  }
  const problem = databaseNameProblem(database);
  if (problem) {
    throw new OutboxTenantNotResolvedError(
      what,
      `tenants.databaseOf('${tenant}') gave no usable database name: ${problem}`,
      tenant,
    );
  }
  return { tenant, database: database as string };
}

/**
 * The tenant of the running call (`tenants.resolve`, by default `OutboxTenantContext`) and its
 * database; throws `OutboxTenantNotResolvedError` when there is none or it is unusable.
 */
export function resolveTarget(options: ResolvedTenantsOptions, what: string): TenantTarget {
  let tenant: unknown;
  try {
    tenant = options.resolve();
  } catch (error) {
    throw new OutboxTenantNotResolvedError(
      what,
      `tenants.resolve() threw: ${(error as Error)?.message ?? String(error)}`,
    );
  }
  return targetOf(options, tenant, what);
}
