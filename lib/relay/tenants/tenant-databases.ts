import type { TenantDatabases } from '../../tenants/tenants.options';

/** The server's own databases: never tenant databases, whatever a pattern matches. */
const SYSTEM_DATABASES: ReadonlySet<string> = new Set(['admin', 'local', 'config']);

/** Thrown when `tenants.databases` gives something that is not a list of database names. */
export class OutboxTenantDatabasesError extends Error {
  override readonly name = 'OutboxTenantDatabasesError';
}

/**
 * The tenant databases to follow now, sorted, each once (several tenants may share one): the
 * list as given, what the function returns (called again at every re-read), or the names of
 * `listDatabases` the pattern matches (the server's own databases never). `listDatabases` is
 * called only for a pattern: a list or a function never makes the relay look at other databases.
 */
export async function tenantDatabases(
  spec: TenantDatabases,
  listDatabases: () => Promise<readonly string[]>,
): Promise<string[]> {
  let names: readonly unknown[];
  if (spec instanceof RegExp) {
    const all = await listDatabases();
    names = all.filter((name) => {
      spec.lastIndex = 0; // a /g or /y pattern keeps state between tests
      return !SYSTEM_DATABASES.has(name) && spec.test(name);
    });
  } else {
    names = typeof spec === 'function' ? await spec() : spec;
  }
  if (!Array.isArray(names)) {
    throw new OutboxTenantDatabasesError(
      `tenants.databases must give an array of database names; got ${typeof names}.`,
    );
  }
  for (const name of names) {
    if (typeof name !== 'string' || name.length === 0 || /[/\\. "$\0]/.test(name)) {
      throw new OutboxTenantDatabasesError(
        `tenants.databases gave ${JSON.stringify(name)}, which is not a MongoDB database name.`,
      );
    }
  }
  return [...new Set(names as string[])].sort();
}
