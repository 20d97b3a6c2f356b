import type { SimScheduler } from '../core/sim.scheduler';
import type { SimDatabase } from '../mongo/sim-database';
import { tenantDatabase } from '../schedule/schedule.types';
import type { Fault, SimTenantsData } from '../schedule/schedule.types';
import type { CommitFact, SimHistory } from './sim.history';

/** Why an event of a tenant database need not be published (see `SimTenants.excuse`). */
export type TenantExcuse = 'dropped' | 'released';

/**
 * The tenant databases of a tenants run: what the app's `tenants.databases` function lists now
 * (changed by `tenant-added` and `tenant-removed` faults) and which databases were dropped.
 */
export class SimTenants {
  private readonly listed: Set<string>;
  /** When each dropped database was dropped (virtual ms). */
  private readonly drops = new Map<string, number[]>();
  /** When each database was last listed or let go (virtual ms). */
  private readonly changedAt = new Map<string, number>();
  /** How many times the list changed (watchers compare it). */
  listChanges = 0;

  constructor(
    private readonly data: SimTenantsData,
    private readonly scheduler: SimScheduler,
    private readonly db: SimDatabase,
    private readonly history: SimHistory,
  ) {
    this.listed = new Set(data.listed.map((index) => this.nameOf(index)));
  }

  /** The database a transaction of `tenant` writes in. */
  nameOf(tenant: number): string {
    return tenantDatabase(tenant % this.data.databases);
  }

  /** The `tenants.databases` function's answer now (the app's own list; no database read). */
  list(): readonly string[] {
    return [...this.listed];
  }

  /** Puts a tenant fault into effect at its time. */
  arm(fault: Fault): void {
    const database = this.nameOf(fault.target);
    this.scheduler.at(fault.at, 'tenants', `${fault.kind} ${database}`, () => {
      switch (fault.kind) {
        case 'tenant-added':
          if (this.listed.has(database)) return;
          this.listed.add(database);
          this.changedAt.set(database, this.scheduler.now);
          this.listChanges++;
          break;
        case 'tenant-removed':
          if (!this.listed.delete(database)) return;
          this.changedAt.set(database, this.scheduler.now);
          this.listChanges++;
          break;
        case 'database-dropped': {
          const gone = this.db.dropTenantDatabase(database);
          this.drops.set(database, [...(this.drops.get(database) ?? []), this.scheduler.now]);
          this.history.note(`database ${database} dropped (${gone} outbox document(s))`);
          break;
        }
        default:
          return;
      }
      this.history.countEffect(fault.kind);
    });
  }

  /**
   * Why `commit` need not be published: its database was dropped after it committed (the event
   * is gone), or its database is not listed now (let go: its pending events stay pending).
   * Undefined: it must be published (or dead-lettered), as without tenants.
   */
  excuse(commit: CommitFact): TenantExcuse | undefined {
    if (commit.database === undefined) return undefined;
    const drops = this.drops.get(commit.database) ?? [];
    if (drops.some((at) => at >= commit.committedAt)) return 'dropped';
    return this.listed.has(commit.database) ? undefined : 'released';
  }

  isListed(database: string): boolean {
    return this.listed.has(database);
  }

  /** Whether `database` is listed now and was all the time since `from` (virtual ms). */
  listedSince(database: string, from: number): boolean {
    return this.listed.has(database) && (this.changedAt.get(database) ?? 0) <= from;
  }
}
