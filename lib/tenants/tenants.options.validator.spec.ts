import { OutboxOptionsError } from '../common/errors/outbox-options.error';
import { resolveOutboxOptions } from '../options/outbox-options.validator';
import { OutboxTenantContext } from './outbox-tenant.context';
import type { OutboxTenantsOptions } from './tenants.options';

const resolveTenants = (tenants: unknown) =>
  resolveOutboxOptions({ relay: false, tenants: tenants as OutboxTenantsOptions }).tenants;

function refusal(tenants: unknown): OutboxOptionsError {
  try {
    resolveTenants(tenants);
  } catch (error) {
    expect(error).toBeInstanceOf(OutboxOptionsError);
    return error as OutboxOptionsError;
  }
  throw new Error(`accepted ${String(tenants)}`);
}

describe('the tenants option', () => {
  it('is false without tenants (one database, as before)', () => {
    expect(resolveOutboxOptions({ relay: false }).tenants).toBe(false);
  });

  it('fills the defaults: resolve from OutboxTenantContext, databaseOf = the tenant id', () => {
    const resolved = resolveTenants({ databases: ['acme', 'globex'] });
    expect(resolved).toMatchObject({
      databases: ['acme', 'globex'],
      stream: 'cluster',
      metricsTenantLimit: 100,
    });
    if (!resolved) throw new Error('unreachable');
    expect(resolved.resolve).toBe(OutboxTenantContext.currentTenant);
    expect(resolved.databaseOf('acme')).toBe('acme');
  });

  it('accepts a function or a RegExp for databases, and the other options', () => {
    const list = async () => ['tenant_a'];
    const resolve = () => 'a';
    const databaseOf = (t: string) => `tenant_${t}`;
    expect(
      resolveTenants({
        databases: list,
        resolve,
        databaseOf,
        stream: 'per-database',
        metricsTenantLimit: 5,
      }),
    ).toEqual({
      databases: list,
      resolve,
      databaseOf,
      stream: 'per-database',
      metricsTenantLimit: 5,
    });
    expect(resolveTenants({ databases: /^tenant_/ })).toMatchObject({ databases: /^tenant_/ });
  });

  it.each([
    ['not an object', 'acme', 'tenants', /expected an object/],
    ['without databases', {}, 'tenants.databases', /is required/],
    [
      'databases of the wrong type',
      { databases: 'acme' },
      'tenants.databases',
      /a list, a function or a RegExp/,
    ],
    ['a bad database name', { databases: ['ok', 'a.b'] }, 'tenants.databases[1]', /refuses/],
    ['a database listed twice', { databases: ['a', 'a'] }, 'tenants.databases', /twice/],
    ['resolve not a function', { databases: [], resolve: 'acme' }, 'tenants.resolve', /a function/],
    [
      'databaseOf not a function',
      { databases: [], databaseOf: {} },
      'tenants.databaseOf',
      /a function/,
    ],
    [
      'an unknown stream',
      { databases: [], stream: 'each' },
      'tenants.stream',
      /"cluster" or "per-database"/,
    ],
    [
      'a zero tenant limit',
      { databases: [], metricsTenantLimit: 0 },
      'tenants.metricsTenantLimit',
      /integer/,
    ],
    ['an unknown key', { databases: [], databse: [] }, 'tenants.databse', /not a known option/],
  ])('fails bootstrap for %s, naming the option', (_, tenants, option, problem) => {
    const error = refusal(tenants);
    expect(error.option).toBe(option);
    expect(error.message).toMatch(problem);
  });
});
