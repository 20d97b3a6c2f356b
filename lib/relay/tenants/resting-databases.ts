import { describeError } from '../../common/errors/describe-error';
import type { RelayLogger } from '../ports/relay-logger';
import type { TenantWatch } from './tenant.ports';

/** Resting databases checked at once: the lease's renewal and the working databases' reads
 *  share the connection pool and the server with these checks. */
export const CHECKS_AT_ONCE = 4;

export interface RestingDatabasesDeps {
  watch: TenantWatch;
  /** Whether `database` has pending events (scheduled ones too). */
  hasWork: (database: string) => Promise<boolean>;
  /** `database` has work: it gets a term (and leaves this set); false when it does not. */
  wake: (database: string) => boolean;
  logger: RelayLogger;
}

/**
 * The followed tenant databases that have no work, and so no term: no engine, no timer, no
 * read of their own. The cluster-wide stream still reads their changes (`TenantWatch`): a
 * change of one wakes it. `checkAll` (every `sweepIntervalMs`) looks for each one's pending
 * events, `CHECKS_AT_ONCE` at a time, and wakes those that have some: what the stream did not
 * show (a lost position, a change read before its commit, an event written while its term was
 * put to rest) is published within one interval.
 */
export class RestingDatabases {
  /** Each resting database, and whether it was checked since it rests. */
  private readonly resting = new Map<string, boolean>();
  private readonly woken = (database: string): boolean => this.wakeIfResting(database);
  /** Once stopped, it never watches again (the next term's set may be the hub's now). */
  private stopped = false;

  constructor(private readonly deps: RestingDatabasesDeps) {}

  has(database: string): boolean {
    return this.resting.has(database);
  }

  get databases(): readonly string[] {
    return [...this.resting.keys()];
  }

  /** `databases` rest (not checked yet). */
  add(...databases: string[]): void {
    const before = this.resting.size;
    for (const database of databases)
      if (!this.resting.has(database)) this.resting.set(database, false);
    if (this.resting.size > before) this.watchNow();
  }

  /** `database` leaves the set (woken, or no longer listed); its pending count if known (0). */
  delete(database: string): number | undefined {
    const checked = this.resting.get(database);
    if (this.resting.delete(database)) this.watchNow();
    return checked ? 0 : undefined;
  }

  /** Its state as `status()` shows it: `following` once checked and read by the stream. */
  statusOf(database: string): { following: boolean; pendingCount?: number } {
    const checked = this.resting.get(database) === true;
    return {
      following: checked && this.deps.watch.covers(database),
      pendingCount: checked ? 0 : undefined,
    };
  }

  /** Checks every resting database (or those of `only`), and wakes those with pending events. */
  async checkAll(active: () => boolean, only?: readonly string[]): Promise<void> {
    const queue = [...(only ?? this.resting.keys())];
    const next = async (): Promise<void> => {
      for (let database = queue.shift(); database !== undefined; database = queue.shift()) {
        if (!active() || !this.resting.has(database)) continue;
        let work: boolean;
        try {
          work = await this.deps.hasWork(database);
        } catch (error) {
          this.deps.logger.warn(
            `Could not check tenant database ${database} for pending events (checked again next time): ${describeError(error)}`,
          );
          continue;
        }
        if (!this.resting.has(database)) continue;
        this.resting.set(database, true);
        if (work && active()) this.wakeIfResting(database);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CHECKS_AT_ONCE, queue.length) }, next));
  }

  /** Stops reading the resting databases' changes. */
  stop(): void {
    this.stopped = true;
    this.resting.clear();
    this.deps.watch.unwatch(this.woken);
  }

  private watchNow(): void {
    if (!this.stopped) this.deps.watch.watch(this.resting.keys(), this.woken);
  }

  private wakeIfResting(database: string): boolean {
    if (!this.resting.has(database)) return false;
    this.delete(database);
    return this.deps.wake(database);
  }
}
