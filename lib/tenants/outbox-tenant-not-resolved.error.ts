import { OutboxError } from '../common/errors/outbox.error';

/**
 * With `tenants` configured, a write (an emit, a cancel, an operation) whose tenant could not be
 * known, or whose tenant has no usable database name. Thrown before anything is written: inside a
 * `@Transactional()` method it rolls the transaction back.
 */
export class OutboxTenantNotResolvedError extends OutboxError {
  constructor(
    readonly what: string,
    detail: string,
    readonly tenant?: string,
  ) {
    super(
      `${what}: ${detail}. Run the call inside runInTenant(tenant, fn) (e.g. from a middleware that ` +
        'reads the tenant from the request), or make the tenants.resolve option return the tenant.',
      'OUTBOX_TENANT_NOT_RESOLVED',
      { what, ...(tenant !== undefined ? { tenant } : {}) },
    );
  }
}
