import type { RelayClock } from '../ports/relay-clock';
import type { RelayStateStore } from '../ports/relay-state.store';
import type { ResolvedRelayOptions } from '../relay.options';

export type LeaseTick = 'acquired' | 'renewed' | 'lost' | 'standby';

/**
 * One active relay among the app's instances. The lease's expiry is the database server's
 * clock: each tick reads the server's time and writes `serverTime + durationMs`; another instance
 * takes over only once that time has passed on the server. No machine's own clock is compared
 * with another's, so clock skew between app hosts cannot make two leaders.
 *
 * Times the relay writes (`nextAttemptAt`, `publishedAt`...) are also on the server's clock
 * (`serverNow()`), so retries due on one leader are due on the next.
 *
 * Locally, this instance counts itself leader only while its elapsed-time clock says less than
 * `durationMs - renewMs / 3` passed since just before the tick that acquired or renewed the
 * lease: the server wrote its expiry after that moment, so the local validity always ends first
 * (clock rates agreeing within that margin). A process paused for longer wakes up past its
 * validity and sends nothing more.
 */
export class LeaseKeeper {
  private fencingNumber?: number;
  private validUntil = 0;
  /** The server's time at the last read, and this process's elapsed-time clock then. */
  private serverAt?: number;
  private serverAtMonotonic = 0;

  constructor(
    private readonly state: RelayStateStore,
    private readonly owner: string,
    private readonly lease: ResolvedRelayOptions['lease'],
    private readonly clock: RelayClock,
  ) {}

  get fencing(): number | undefined {
    return this.fencingNumber;
  }

  /** Whether this instance may publish and write now. Always true without a lease. */
  isValid(): boolean {
    if (!this.lease.enabled) return true;
    return this.fencingNumber !== undefined && this.clock.monotonic() < this.validUntil;
  }

  /** Monotonic ms left of the local validity (0 when not leader). */
  remainingMs(): number {
    return this.fencingNumber === undefined
      ? 0
      : Math.max(0, this.validUntil - this.clock.monotonic());
  }

  /**
   * The server's time as this process estimates it (stamps, retry times), ms: the last time read
   * from the server plus the elapsed time since, so a step of this machine's wall clock changes
   * nothing. Before the first read, this process's wall clock.
   */
  serverNow(): number {
    if (this.serverAt === undefined) return this.clock.now();
    return this.serverAt + (this.clock.monotonic() - this.serverAtMonotonic);
  }

  /** Reads the server's time (also without a lease: it keeps stamps on the server's clock). */
  async syncServerTime(): Promise<number> {
    const server = (await this.state.serverTime()).getTime();
    this.serverAt = server;
    this.serverAtMonotonic = this.clock.monotonic();
    return server;
  }

  /** Acquires or renews. Rejects on a database error (the validity then simply runs out). */
  async tick(): Promise<LeaseTick> {
    const startedAt = this.clock.monotonic();
    const serverNow = await this.syncServerTime();
    const expiresAt = new Date(serverNow + this.lease.durationMs);
    const validity = this.lease.durationMs - Math.ceil(this.lease.renewMs / 3);
    if (this.fencingNumber !== undefined) {
      if (await this.state.renewLease(this.owner, this.fencingNumber, expiresAt)) {
        this.validUntil = startedAt + validity;
        return 'renewed';
      }
      this.lost();
      return 'lost';
    }
    const grant = await this.state.acquireLease(this.owner, new Date(serverNow), expiresAt);
    if (!grant) return 'standby';
    this.fencingNumber = grant.fencing;
    this.validUntil = startedAt + validity;
    return 'acquired';
  }

  /**
   * Renews the lease this instance holds, never acquires one: a graceful stop keeps its lease
   * valid while it settles. False when none is held or it was lost. Rejects on a database error.
   */
  async renew(): Promise<boolean> {
    if (this.fencingNumber === undefined) return false;
    return (await this.tick()) === 'renewed';
  }

  /** Lets another instance take over at once. Rejects on a database error. */
  async release(): Promise<void> {
    const fencing = this.fencingNumber;
    this.lost();
    if (fencing !== undefined) await this.state.releaseLease(this.owner, fencing);
  }

  lost(): void {
    this.fencingNumber = undefined;
    this.validUntil = 0;
  }
}
