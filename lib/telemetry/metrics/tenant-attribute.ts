import type { TenantDatabaseStatus } from '../../relay/relay.status';

/** The attribute of the per-tenant-database values (`tenants` option). */
export const TENANT_ATTRIBUTE = 'outbox.tenant.database';

/** The value of the attribute for the databases past `tenants.metricsTenantLimit`. */
export const OTHER_TENANTS = 'other';

/** One series of the per-tenant gauges: its pending events and the age of its oldest. */
export interface TenantSeries {
  pending: number;
  lagMs: number;
}

/**
 * The per-tenant series of the relay's gauges, with their number bounded: the first
 * `limit` databases seen keep their name for the life of the process, the others are summed
 * into `other` (pending added, lag the oldest). A database seen before and absent now (let go,
 * or another instance leads) reads 0, as a partition handed over does: cumulative readers would
 * otherwise repeat its last figure.
 */
export class TenantSeriesNames {
  private readonly named = new Set<string>();
  private otherSeen = false;

  constructor(private readonly limit: number) {}

  series(tenants: readonly TenantDatabaseStatus[]): Map<string, TenantSeries> {
    const out = new Map<string, TenantSeries>();
    for (const name of this.named) out.set(name, { pending: 0, lagMs: 0 });
    if (this.otherSeen) out.set(OTHER_TENANTS, { pending: 0, lagMs: 0 });
    for (const tenant of tenants) {
      if (tenant.state !== 'followed') continue;
      const name = this.nameOf(tenant.database);
      const series = out.get(name) ?? { pending: 0, lagMs: 0 };
      series.pending += tenant.pendingCount ?? 0;
      series.lagMs = Math.max(series.lagMs, tenant.oldestPendingAgeMs ?? 0);
      out.set(name, series);
    }
    return out;
  }

  private nameOf(database: string): string {
    if (this.named.has(database)) return database;
    if (this.named.size < this.limit) {
      this.named.add(database);
      return database;
    }
    this.otherSeen = true;
    return OTHER_TENANTS;
  }
}
