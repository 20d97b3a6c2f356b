import { OutboxTenantDatabasesError, tenantDatabases } from './tenant-databases';

describe('tenantDatabases', () => {
  const never = () => Promise.reject(new Error('listDatabases must not be called'));

  it('follows each database once, sorted, when several tenants share one', async () => {
    await expect(tenantDatabases(['t_b', 't_a', 't_b'], never)).resolves.toEqual(['t_a', 't_b']);
  });

  it('calls a function each time, and never lists the databases for it', async () => {
    let calls = 0;
    const spec = () => (++calls === 1 ? ['t1'] : ['t1', 't2']);
    await expect(tenantDatabases(spec, never)).resolves.toEqual(['t1']);
    await expect(tenantDatabases(async () => spec(), never)).resolves.toEqual(['t1', 't2']);
  });

  it('matches a pattern against listDatabases, never the server databases, also with /g', async () => {
    const list = () => Promise.resolve(['admin', 'local', 'config', 'tenant_1', 'app', 'tenant_2']);
    await expect(tenantDatabases(/^tenant_|^admin$/g, list)).resolves.toEqual([
      'tenant_1',
      'tenant_2',
    ]);
  });

  it('refuses what is not a database name', async () => {
    await expect(tenantDatabases(['a.b'], never)).rejects.toBeInstanceOf(
      OutboxTenantDatabasesError,
    );
    await expect(tenantDatabases(() => 'x' as never, never)).rejects.toThrow(/array/);
  });
});
