import { OutboxTenantContext, currentTenant, runInTenant } from './outbox-tenant.context';
import { OutboxTenantNotResolvedError } from './outbox-tenant-not-resolved.error';
import { databaseNameProblem, resolveTarget, targetOf } from './tenant.resolution';
import type { ResolvedTenantsOptions } from './tenants.resolved';

const options = (over: Partial<ResolvedTenantsOptions> = {}): ResolvedTenantsOptions => ({
  resolve: OutboxTenantContext.currentTenant,
  databaseOf: (tenant) => tenant,
  databases: [],
  stream: 'cluster',
  metricsTenantLimit: 100,
  ...over,
});

describe('tenant resolution', () => {
  it('runInTenant makes the tenant current for the call and what it awaits, innermost first', async () => {
    expect(currentTenant()).toBeUndefined();
    const seen = await runInTenant('acme', async () => {
      await new Promise((resolve) => setImmediate(resolve));
      const outer = currentTenant();
      const inner = runInTenant('globex', () => OutboxTenantContext.currentTenant());
      return { outer, inner, after: currentTenant() };
    });
    expect(seen).toEqual({ outer: 'acme', inner: 'globex', after: 'acme' });
    expect(currentTenant()).toBeUndefined();
  });

  it('resolves by default from the context, to a database named like the tenant', () => {
    expect(runInTenant('acme', () => resolveTarget(options(), 'emit'))).toEqual({
      tenant: 'acme',
      database: 'acme',
    });
  });

  it('uses the resolve and databaseOf options; tenants may share a database', () => {
    const shared = options({ resolve: () => 'small-1', databaseOf: () => 'tenants_shared' });
    expect(resolveTarget(shared, 'emit')).toEqual({
      tenant: 'small-1',
      database: 'tenants_shared',
    });
    expect(targetOf(shared, 'small-2', 'emit')).toEqual({
      tenant: 'small-2',
      database: 'tenants_shared',
    });
  });

  it.each([
    ['no tenant', options(), /no tenant is known/],
    ['an empty tenant', options({ resolve: () => '' }), /non-empty string/],
    [
      'a resolve that throws',
      options({
        resolve: () => {
          throw new Error('no request');
        },
      }),
      /tenants.resolve\(\) threw: no request/,
    ],
    [
      'a databaseOf that throws',
      options({
        resolve: () => 'acme',
        databaseOf: () => {
          throw new Error('unknown tenant');
        },
      }),
      /databaseOf\('acme'\) threw: unknown tenant/,
    ],
    [
      'a database name MongoDB refuses',
      options({ resolve: () => 'a.b' }),
      /refuses in a database name/,
    ],
  ])('throws OutboxTenantNotResolvedError for %s', (_, given, message) => {
    const error = (() => {
      try {
        resolveTarget(given, 'OutboxEmitter: emit of OrderPlaced');
      } catch (thrown) {
        return thrown;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(OutboxTenantNotResolvedError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toMatch(/^OutboxEmitter: emit of OrderPlaced: /);
    expect((error as OutboxTenantNotResolvedError).code).toBe('OUTBOX_TENANT_NOT_RESOLVED');
  });

  it('checks database names as MongoDB does', () => {
    expect(databaseNameProblem('tenant_acme')).toBeUndefined();
    expect(databaseNameProblem('')).toMatch(/non-empty/);
    expect(databaseNameProblem('x'.repeat(64))).toMatch(/longer than 63 bytes/);
    for (const bad of ['a/b', 'a b', 'a$b', 'a"b', 'a\u0000b']) {
      expect(databaseNameProblem(bad)).toBeDefined();
    }
  });
});
