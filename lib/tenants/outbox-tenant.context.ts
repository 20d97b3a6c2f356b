import { AsyncLocalStorage } from 'node:async_hooks';

const tenants = new AsyncLocalStorage<string>();

/**
 * The library's own tenant context (the default `tenants.resolve`): `runInTenant(tenant, fn)`
 * makes `tenant` the current one for `fn` and everything it awaits, e.g. from a middleware that
 * reads the tenant from the request. Nested calls see the innermost tenant.
 */
export class OutboxTenantContext {
  /** Runs `fn` with `tenant` as the current tenant; returns what `fn` returns. */
  static runInTenant<T>(tenant: string, fn: () => T): T {
    return tenants.run(tenant, fn);
  }

  /** The tenant of the running call (undefined outside `runInTenant`). */
  static currentTenant(): string | undefined {
    return tenants.getStore();
  }
}

/** `OutboxTenantContext.runInTenant`. */
export function runInTenant<T>(tenant: string, fn: () => T): T {
  return OutboxTenantContext.runInTenant(tenant, fn);
}

/** `OutboxTenantContext.currentTenant`. */
export function currentTenant(): string | undefined {
  return OutboxTenantContext.currentTenant();
}
