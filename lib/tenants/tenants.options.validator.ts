import { showOption, type OptionChecker, type OptionKeys } from '../common/options/option.checker';
import { OutboxTenantContext } from './outbox-tenant.context';
import { databaseNameProblem } from './tenant.resolution';
import type { OutboxTenantsOptions, TenantDatabases } from './tenants.options';
import type { ResolvedTenantsOptions, TenantsSetting } from './tenants.resolved';

const TENANTS_KEYS = {
  resolve: true,
  databaseOf: true,
  databases: true,
  stream: true,
  metricsTenantLimit: true,
} as const satisfies OptionKeys<OutboxTenantsOptions>;

export const TENANTS_DEFAULTS = Object.freeze({
  stream: 'cluster' as const,
  metricsTenantLimit: 100,
});

/** The default `databaseOf`: the tenant id is its database's name. */
const sameName = (tenant: string): string => tenant;

/**
 * Validates the `tenants` option (at `check`'s root: names start with `tenants.`) and fills the
 * defaults; `false` when it is absent. Throws through `check` (an `OutboxOptionsError` at
 * bootstrap) naming the option and the fix.
 */
export function resolveTenantsOptions(check: OptionChecker, raw: unknown): TenantsSetting {
  if (raw === undefined) return false;
  const given = check.object<OutboxTenantsOptions>(
    'tenants',
    raw,
    TENANTS_KEYS,
    'Pass an object, e.g. { databases: /^tenant_/ }, or leave it out for one database.',
  );
  const at = check.at('tenants');
  const resolve = at.fn<ResolvedTenantsOptions['resolve']>(
    'resolve',
    given.resolve,
    'Give a function returning the current tenant id, or omit it to use runInTenant(tenant, fn).',
  );
  const databaseOf = at.fn<ResolvedTenantsOptions['databaseOf']>(
    'databaseOf',
    given.databaseOf,
    'Give a function from a tenant id to its database name, e.g. (t) => `tenant_${t}`, or omit it (the tenant id is the name).',
  );
  const databases = checkDatabases(at, given.databases);
  const stream = at.oneOf(
    'stream',
    given.stream ?? TENANTS_DEFAULTS.stream,
    ['cluster', 'per-database'] as const,
    "Use 'cluster' (one change stream for every tenant database, the default) or 'per-database'.",
  );
  const metricsTenantLimit = at.int(
    'metricsTenantLimit',
    given.metricsTenantLimit,
    TENANTS_DEFAULTS.metricsTenantLimit,
    { min: 1, max: 100_000 },
  );
  return {
    resolve: resolve ?? OutboxTenantContext.currentTenant,
    databaseOf: databaseOf ?? sameName,
    databases,
    stream,
    metricsTenantLimit,
  };
}

function checkDatabases(at: OptionChecker, value: unknown): TenantDatabases {
  const fix =
    "Give the tenant databases the relay follows: a list (['tenant_a', 'tenant_b']), a function " +
    'returning the list (called again every sweep interval), or a RegExp matched against database names.';
  if (value === undefined) at.fail('databases', 'is required with tenants', fix);
  if (value instanceof RegExp || typeof value === 'function') return value as TenantDatabases;
  if (!Array.isArray(value)) {
    at.fail('databases', `expected a list, a function or a RegExp, got ${showOption(value)}`, fix);
  }
  const list = value as unknown[];
  list.forEach((name, i) => at.check(`databases[${i}]`, databaseNameProblem(name), fix));
  const seen = new Set<string>();
  for (const name of list as string[]) {
    if (seen.has(name)) at.fail('databases', `lists '${name}' twice`, 'List each database once.');
    seen.add(name);
  }
  return Object.freeze([...(list as string[])]);
}
