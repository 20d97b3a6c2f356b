import { describeError } from '../../common/errors/describe-error';
import type { RelayLogger } from '../ports/relay-logger';
import type { TenantWatch } from './tenant.ports';

/** Resting databases checked at once: the lease's renewal and the working databases' reads
 *  share the connection pool and the server with these checks. */
export const CHECKS_AT_ONCE = 4;

export interface RestingDatabasesDeps {
  watch: TenantWatch;
  /** The count of `database`'s events pending and due now. */
  pendingOf: (database: string) => Promise<number>;
  /** `database` has work: it gets a term (and leaves this set); false when it does not. */
  wake: (database: string) => boolean;
  logger: RelayLogger;
}

/**
 * The followed tenant databases that have no work, and so no term: no engine, no timer, no
 * read of their own. The cluster-wide stream still reads their changes (`TenantWatch`): a
 * change of one wakes it. `checkAll` (every `sweepIntervalMs`) counts each one's pending
 * events, `CHECKS_AT_ONCE` at a time, and wakes those that have some: what the stream did not
 * show (a lost position, a change read before its commit, an event written while its term was
 * put to rest) is published within one interval.
 */
export class RestingDatabases {
  /** Each resting database and its pending count at its last check (undefined: not checked). */
  private readonly resting = new Map<string, number | undefined>();
  private readonly woken = (database: string): boolean => this.wakeIfResting(database);

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
      if (!this.resting.has(database)) this.resting.set(database, undefined);
    if (this.resting.size > before) this.deps.watch.watch(this.resting.keys(), this.woken);
  }

  /** `database` leaves the set (woken, or no longer listed); its last pending count. */
  delete(database: string): number | undefined {
    const count = this.resting.get(database);
    if (this.resting.delete(database)) this.deps.watch.watch(this.resting.keys(), this.woken);
    return count;
  }

  /** Its state as `status()` shows it: `following` once checked and read by the stream. */
  statusOf(database: string): { following: boolean; pendingCount?: number } {
    const count = this.resting.get(database);
    return {
      following: count !== undefined && this.deps.watch.covers(database),
      pendingCount: count,
    };
  }

  /** Checks every resting database (or those of `only`), and wakes those with pending events. */
  async checkAll(active: () => boolean, only?: readonly string[]): Promise<void> {
    const queue = [...(only ?? this.resting.keys())];
    const next = async (): Promise<void> => {
      for (let database = queue.shift(); database !== undefined; database = queue.shift()) {
        if (!active() || !this.resting.has(database)) continue;
        let count: number;
        try {
          count = await this.deps.pendingOf(database);
        } catch (error) {
          this.deps.logger.warn(
            `Could not check tenant database ${database} for pending events (checked again next time): ${describeError(error)}`,
          );
          continue;
        }
        if (!this.resting.has(database)) continue;
        this.resting.set(database, count);
        if (count > 0 && active()) this.wakeIfResting(database);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CHECKS_AT_ONCE, queue.length) }, next));
  }

  /** Stops reading the resting databases' changes. */
  stop(): void {
    this.resting.clear();
    this.deps.watch.unwatch(this.woken);
  }

  private wakeIfResting(database: string): boolean {
    if (!this.resting.has(database)) return false;
    this.delete(database);
    return this.deps.wake(database);
  }
}
