import { describeError } from '../../common/errors/describe-error';
import type { LeaseKeeper } from '../lease/lease.keeper';
import { aggregateGauges, partitionMetrics } from '../partitions/partition.metrics';
import { everyInTurn, type RelayJob } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import { labelled } from '../partitions/partition.relay';
import type { RelayNodeDeps } from '../relay-node.deps';
import type { OutboxRelayMetrics } from '../relay.metrics';
import type { ResolvedRelayOptions } from '../relay.options';
import type { TenantDatabaseStatus } from '../relay.status';
import { combinedStatus } from '../term/combined-status';
import type { LeaderTerm, TermStatus } from '../term/leader-term';
import { RelayTerm } from '../term/relay.term';
import type { TermEnd } from '../term/term-end';
import { TenantInFlight } from './tenant-in-flight.pool';
import type { TenantPorts } from './tenant.ports';

interface Followed {
  term: RelayTerm;
  metrics: OutboxRelayMetrics;
}

/**
 * One leadership term over every tenant database: an ordinary `RelayTerm` per database (its
 * engine, stream follower and drain, sweep, due reader, retries, holds and dead letters, all
 * on that database's outbox), under the one lease and fencing number, sharing the publisher
 * and one in-flight bound. Every `sweepIntervalMs` it reads the database list again: a new
 * database gets a term (which drains its pending events), one no longer listed is let go
 * gracefully (its pending events stay pending and are reported), one whose term failed (its
 * database dropped, unreachable) is started again. A database whose term is still ending is
 * followed again only once that term ended: two terms on one database would publish its
 * aggregates twice at once. Nothing runs for one database only.
 */
export class TenantsTerm implements LeaderTerm {
  private active = true;
  private readonly followed = new Map<string, Followed>();
  private readonly released = new Map<string, number | undefined>();
  private readonly leaving = new Set<Promise<unknown>>();
  /** Databases whose term is ending (let go, or failed): not followed again until it ended. */
  private readonly ending = new Set<string>();
  private readonly budget: TenantInFlight;
  private readonly logger: RelayLogger;
  private refresher?: RelayJob;

  constructor(
    private readonly options: ResolvedRelayOptions,
    private readonly deps: RelayNodeDeps & { tenants: TenantPorts },
    private readonly lease: LeaseKeeper,
    readonly fencing: number | null,
    private readonly ended: (why: TermEnd) => void,
  ) {
    this.budget = new TenantInFlight(options.maxInFlight, options.maxInFlightBytes, {
      events: options.batchSize,
      bytes: options.maxBatchBytes,
    });
    this.logger = deps.loggers('RelayTenants');
  }

  start(): void {
    const name = `nestjs-outbox:relay:${this.options.name}:tenants`;
    this.refresher = everyInTurn(this.deps.clock, name, this.options.sweepIntervalMs, () =>
      this.refresh(),
    );
    void this.refresh();
  }

  /** Follows the databases listed now, lets go of the others. */
  private async refresh(): Promise<void> {
    let wanted: readonly string[];
    try {
      wanted = await this.deps.tenants.databases();
    } catch (error) {
      this.logger.warn(`Could not read the tenant databases (retried): ${describeError(error)}`);
      return;
    }
    if (!this.active) return;
    const listed = new Set(wanted);
    for (const database of wanted) {
      if (!this.followed.has(database) && !this.ending.has(database)) this.follow(database);
    }
    for (const database of [...this.followed.keys()]) {
      if (!listed.has(database)) this.letGo(database);
    }
    aggregateGauges(
      this.deps.metrics,
      [...this.followed.values()].map((one) => one.metrics),
    );
  }

  private follow(database: string): void {
    const ports = this.deps.tenants.forDatabase(database, this.fencing);
    const metrics = partitionMetrics(this.deps.metrics);
    const term: RelayTerm = new RelayTerm(
      { ...this.options, name: `${this.options.name}@${database}` },
      {
        ...this.deps,
        ...ports,
        metrics,
        loggers: labelled(this.deps.loggers, database),
        budget: () => this.budget.share(),
      },
      this.lease,
      this.fencing,
      (why) => this.databaseEnded(database, term, why),
    );
    this.followed.set(database, { term, metrics });
    this.released.delete(database);
    term.start();
  }

  private databaseEnded(database: string, term: RelayTerm, why: TermEnd): void {
    if (this.followed.get(database)?.term !== term) return;
    if (why === 'fenced-off') {
      this.endItself('fenced-off');
      return;
    }
    // Its start-up failed (unreachable, dropped meanwhile...): the others go on, this one is
    // started again at the next re-read if still listed.
    this.followed.delete(database);
    this.track(database, term.end(0));
  }

  private letGo(database: string): void {
    const one = this.followed.get(database);
    if (!one) return;
    this.followed.delete(database);
    this.logger.log(
      `Tenant database ${database} is no longer listed; it is let go (its pending events stay pending).`,
    );
    const ports = this.deps.tenants.forDatabase(database, this.fencing);
    this.track(
      database,
      one.term.end(this.options.shutdownTimeoutMs).then(async () => {
        const stats = await ports.outbox.pendingStats().catch(() => undefined);
        if (!this.followed.has(database)) this.released.set(database, stats?.count);
      }),
    );
  }

  private endItself(why: TermEnd): void {
    if (!this.active) return;
    this.active = false;
    this.ended(why);
  }

  async end(timeoutMs: number): Promise<boolean> {
    this.active = false;
    await this.refresher?.stop();
    const terms = [...this.followed.values()].map((one) => one.term.end(timeoutMs));
    const finished = await Promise.all(terms);
    await Promise.allSettled([...this.leaving]);
    return finished.every(Boolean);
  }

  status(): TermStatus {
    const followed = [...this.followed.entries()].map(([database, one]) => ({
      database,
      status: one.term.status(),
      metrics: one.metrics,
    }));
    const statuses = followed.map((one) => one.status);
    const tenants: TenantDatabaseStatus[] = followed.map(({ database, status, metrics }) => ({
      database,
      state: 'followed',
      stream: status.stream,
      inFlight: status.inFlight,
      pendingCount: metrics.pendingCount,
      oldestPendingAgeMs: metrics.oldestPendingAgeMs,
    }));
    for (const [database, pendingCount] of this.released) {
      tenants.push({ database, state: 'released', stream: 'stopped', pendingCount });
    }
    tenants.sort((a, b) => (a.database < b.database ? -1 : a.database > b.database ? 1 : 0));
    return {
      ...combinedStatus(statuses, { events: this.budget.events, bytes: this.budget.bytes }),
      tenants,
    };
  }

  /** `database`'s term ending: awaited by `end()`, and the database not followed meanwhile. */
  private track(database: string, work: Promise<unknown>): void {
    this.ending.add(database);
    const tracked: Promise<unknown> = work
      .catch((error: unknown) =>
        this.logger.warn(`Letting a tenant database go failed: ${describeError(error)}`),
      )
      .finally(() => {
        this.leaving.delete(tracked);
        this.ending.delete(database);
      });
    this.leaving.add(tracked);
  }
}
