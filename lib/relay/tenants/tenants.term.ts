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
import { RestingDatabases } from './resting-databases';
import { TenantInFlight } from './tenant-in-flight.pool';
import type { TenantPorts } from './tenant.ports';

interface Followed {
  term: RelayTerm;
  metrics: OutboxRelayMetrics;
  /** Re-reads in a row that found it without work (see `quiet`). */
  quietFor: number;
}

/** Re-reads in a row without work after which a term is put to rest (its sweep ran meanwhile). */
const QUIET_REREADS = 2;

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
 *
 * With the cluster-wide stream (`TenantPorts.watch`), a database gets a term only while it has
 * work: a listed database first rests (`RestingDatabases`: no term, its changes read by the
 * stream), is woken by a change or by pending events found at a re-read, and its term is put
 * to rest again once it was without work (nothing pending, scheduled, held or in memory) at
 * `QUIET_REREADS` re-reads in a row. A thousand databases with events in ten cost ten terms.
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
  private readonly resting?: RestingDatabases;
  private listed: ReadonlySet<string> = new Set();
  /** Databases whose term is put to rest (shown as followed meanwhile). */
  private readonly goingToRest = new Set<string>();
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
    const watch = deps.tenants.watch;
    if (watch) {
      this.resting = new RestingDatabases({
        watch,
        hasWork: (database) => this.hasWork(database),
        wake: (database) => this.wake(database),
        logger: this.logger,
      });
    }
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
    this.listed = listed;
    const added = wanted.filter(
      (database) =>
        !this.followed.has(database) && !this.ending.has(database) && !this.resting?.has(database),
    );
    for (const database of added) this.released.delete(database);
    if (this.resting) this.resting.add(...added);
    else for (const database of added) this.follow(database);
    for (const database of [...this.followed.keys()]) {
      if (!listed.has(database)) this.letGo(database);
    }
    for (const database of this.resting?.databases ?? []) {
      if (!listed.has(database)) this.released.set(database, this.resting?.delete(database));
    }
    this.restTheQuiet();
    await this.resting?.checkAll(() => this.active);
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
    this.followed.set(database, { term, metrics, quietFor: 0 });
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

  /** Whether `database` has pending events, scheduled ones too. */
  private async hasWork(database: string): Promise<boolean> {
    if (this.deps.tenants.hasPending) return this.deps.tenants.hasPending(database);
    const outbox = this.deps.tenants.forDatabase(database, this.fencing).outbox;
    if ((await outbox.pendingStats()).count > 0) return true;
    return (await outbox.scheduledStats(new Date(this.lease.serverNow()))).count > 0;
  }

  /** A resting database has work: it gets a term (which drains its pending events first). */
  private wake(database: string): boolean {
    if (!this.active || !this.listed.has(database) || this.followed.has(database)) return false;
    this.follow(database);
    return true;
  }

  /** Puts to rest the terms without work at `QUIET_REREADS` re-reads in a row. */
  private restTheQuiet(): void {
    if (!this.resting) return;
    for (const [database, one] of this.followed) {
      one.quietFor = quiet(one) ? one.quietFor + 1 : 0;
      if (one.quietFor < QUIET_REREADS) continue;
      this.followed.delete(database);
      this.goingToRest.add(database);
      const resting = this.resting;
      this.track(
        database,
        one.term.end(this.options.shutdownTimeoutMs).then(async () => {
          this.goingToRest.delete(database);
          if (!this.active || !this.listed.has(database) || this.followed.has(database)) return;
          resting.add(database);
          // An event written while its term ended is found now, not one interval later.
          await resting.checkAll(() => this.active, [database]);
        }),
      );
    }
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
      one.term.end(this.options.shutdownTimeoutMs).then(async (finished) => {
        if (!finished) {
          this.logger.warn(
            `Publishes of tenant database ${database} still in flight after ${this.options.shutdownTimeoutMs} ms were abandoned; ` +
              'their events stay pending and are sent again once it is followed again.',
          );
        }
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
    this.resting?.stop();
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
    const resting = [
      ...(this.resting?.databases ?? []).map((database) => ({
        database,
        ...(this.resting as RestingDatabases).statusOf(database),
      })),
      ...[...this.goingToRest].map((database) => ({ database, following: true, pendingCount: 0 })),
    ];
    const statuses = [
      ...followed.map((one) => one.status),
      ...resting.map(({ following }) => ({
        stream: following ? ('following' as const) : ('draining' as const),
        heldDestinations: [],
        trackedAggregates: 0,
      })),
    ];
    const tenants: TenantDatabaseStatus[] = followed.map(({ database, status, metrics }) => ({
      database,
      state: 'followed',
      stream: status.stream,
      inFlight: status.inFlight,
      pendingCount: metrics.pendingCount,
      oldestPendingAgeMs: metrics.oldestPendingAgeMs,
    }));
    for (const { database, following, pendingCount } of resting) {
      const stream = following ? 'following' : 'draining';
      tenants.push({
        database,
        state: 'followed',
        stream,
        inFlight: { events: 0, bytes: 0 },
        pendingCount,
      });
    }
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

/** Without work: nothing pending or scheduled at its last sweep, nothing in memory or held. */
function quiet(one: Followed): boolean {
  const status = one.term.status();
  return (
    status.stream === 'following' &&
    status.inFlight.events === 0 &&
    status.trackedAggregates === 0 &&
    status.heldDestinations.length === 0 &&
    one.metrics.pendingCount === 0 &&
    !one.metrics.scheduledCount
  );
}
