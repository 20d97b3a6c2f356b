import { describeError } from '../common/errors/describe-error';
import { outboxDiagnostics } from '../diagnostics/outbox.diagnostics';
import { LeaseKeeper } from './lease/lease.keeper';
import { everyInTurn, type RelayJob, type RelayTimer } from './ports/relay-clock';
import type { RelayLogger } from './ports/relay-logger';
import type { RelayNodeDeps } from './relay-node.deps';
import type { ResolvedRelayOptions } from './relay.options';
import type { RelayStatus } from './relay.status';
import type { LeaderTerm } from './term/leader-term';
import { RelayTerm } from './term/relay.term';
import type { TermEnd } from './term/term-end';

/**
 * One relay instance, free of Nest: renews or tries to acquire the lease every `lease.renewMs`
 * and runs a `RelayTerm` while it leads. `OutboxRelay` is its Nest lifecycle facade; the
 * simulation runs several of these against simulated ports.
 */
export class RelayNode {
  private readonly lease: LeaseKeeper;
  private readonly logger: RelayLogger;
  private running = false;
  private term?: LeaderTerm;
  private ending?: Promise<void>;
  private ticker?: RelayJob;
  private watchdog?: RelayTimer;

  constructor(
    private readonly options: ResolvedRelayOptions,
    private readonly deps: RelayNodeDeps,
  ) {
    this.lease = new LeaseKeeper(deps.state, deps.owner, options.lease, deps.clock);
    deps.metrics.serverNow = () => this.lease.serverNow();
    this.logger = deps.loggers('RelayLease');
  }

  get isLeader(): boolean {
    return this.term !== undefined && this.lease.isValid();
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Starts (idempotent); resolves once it tried to become leader. Work goes on in the background. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    await this.tick();
    if (!this.running) return;
    const interval = this.options.lease.enabled ? this.options.lease.renewMs : 1000;
    this.ticker = everyInTurn(this.deps.clock, `${this.jobName}:lease`, interval, () =>
      this.tick(),
    );
  }

  /**
   * Stops taking work, lets publishes under way finish (up to `shutdownTimeoutMs`; then they
   * stay pending), saves the checkpoint, releases the lease. Never throws. The publisher's
   * connection is not its own: `PartitionedRelayNode` opens and closes it.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    try {
      const ticking = this.ticker?.stop();
      this.watchdog?.cancel();
      await ticking;
      await this.endTerm('the relay is stopping', true);
    } catch (error) {
      this.logger.error(`Error while stopping the relay (ignored): ${describeError(error)}`);
    }
  }

  status(): RelayStatus {
    const term = this.term?.status();
    return {
      running: this.running,
      role: !this.running ? 'stopped' : this.term ? 'leader' : 'standby',
      fencing: this.term ? (this.term.fencing ?? undefined) : undefined,
      stream: term?.stream ?? 'stopped',
      streamError: term?.streamError,
      brokerPausedUntil: term?.brokerPausedUntil,
      configurationError: term?.configurationError,
      heldDestinations: term?.heldDestinations ?? [],
      inFlight: term?.inFlight ?? { events: 0, bytes: 0 },
      trackedAggregates: term?.trackedAggregates ?? 0,
      ...(term?.tenants ? { tenants: term.tenants } : {}),
    };
  }

  private async tick(): Promise<void> {
    if (!this.running) return;
    await this.ending;
    try {
      if (!this.options.lease.enabled) {
        await this.lease.syncServerTime().catch(() => undefined);
        if (!this.term && this.running) this.beginTerm(null);
        return;
      }
      const validUntil = this.deps.clock.monotonic() + this.lease.remainingMs();
      const result = await this.lease.tick();
      if (!this.running) return;
      const lapsed = result === 'renewed' && this.deps.clock.monotonic() >= validUntil;
      if ((result === 'acquired' || result === 'renewed') && (lapsed || !this.lease.isValid())) {
        // The answer came back after the local validity had run out (a slow call or a pause):
        // not leader on that grant; the next tick acquires again. Also when the renewal still
        // grants some validity: the term stopped publishing meanwhile (nothing starts it again).
        this.lease.lost();
        await this.endTerm('the lease answer came too late');
        return;
      }
      if (result === 'acquired') {
        this.logger.log(
          `This instance (${this.deps.owner}) is the relay leader (fencing ${this.lease.fencing}).`,
        );
      }
      if (result === 'lost') {
        await this.endTerm('another instance took the lease');
      } else if ((result === 'acquired' || result === 'renewed') && !this.term) {
        this.beginTerm(this.lease.fencing as number);
      }
    } catch (error) {
      this.logger.warn(`Relay lease check failed (retrying): ${describeError(error)}`);
    }
    this.armWatchdog();
  }

  /** Ends the term when the local validity runs out before a renewal lands. */
  private armWatchdog(): void {
    this.watchdog?.cancel();
    if (!this.term || !this.options.lease.enabled) return;
    const term = this.term;
    this.watchdog = this.deps.clock.setTimeout(() => {
      if (this.term !== term) return;
      // Fired before the validity ran out (a timer may: Node's up to 1 ms, or a clock that
      // slowed since it was set): waits for the rest.
      if (this.lease.isValid()) return this.armWatchdog();
      this.lease.lost();
      void this.endTerm('the lease could not be renewed in time');
    }, this.lease.remainingMs() + 1);
  }

  private beginTerm(fencing: number | null): void {
    const ended = (why: TermEnd): void => this.termEnded(term, why);
    const term: LeaderTerm = this.deps.terms
      ? this.deps.terms(this.options, this.deps, this.lease, fencing, ended)
      : new RelayTerm(this.options, this.deps, this.lease, fencing, ended);
    this.term = term;
    this.deps.metrics.leader = true;
    outboxDiagnostics.relayLeaseTaken(this.options.name, this.deps.owner, fencing);
    term.start();
    this.armWatchdog();
  }

  private termEnded(term: LeaderTerm, why: TermEnd): void {
    if (this.term !== term) return;
    if (why === 'fenced-off') {
      this.lease.lost();
      void this.endTerm('a newer leader fenced this instance off', false, 0);
    } else {
      void this.endTerm(
        'its start-up failed; a new term starts with the next lease renewal',
        false,
        0,
      );
    }
  }

  /** Renews the held lease every `lease.renewMs` until `stop()`, which waits for a renewal under way. */
  private renewWhileEnding(): RelayJob {
    if (!this.options.lease.enabled) return { stop: async () => undefined };
    const { renewMs } = this.options.lease;
    return everyInTurn(this.deps.clock, `${this.jobName}:lease-while-stopping`, renewMs, () =>
      this.lease.renew().catch(() => false),
    );
  }

  private get jobName(): string {
    return `nestjs-outbox:relay:${this.options.name}`;
  }

  /** `release`: a graceful stop (renews while settling, then releases the lease). */
  private async endTerm(
    reason: string,
    release = false,
    timeoutMs = this.options.shutdownTimeoutMs,
  ): Promise<void> {
    const term = this.term;
    if (!term) return this.ending;
    this.term = undefined;
    this.deps.metrics.leader = false;
    outboxDiagnostics.relayLeaseLost(this.options.name, this.deps.owner, reason, release);
    this.logger.log(`Relay leadership ends: ${reason}.`);
    this.ending = (async () => {
      // A graceful stop keeps renewing the lease while it settles, however long the lease is
      // next to shutdownTimeoutMs: what the broker acknowledged is marked under a valid lease.
      const renewal = release ? this.renewWhileEnding() : undefined;
      let finished: boolean;
      try {
        finished = await term.end(timeoutMs);
      } finally {
        await renewal?.stop();
      }
      if (!finished) {
        this.logger.warn(
          `Publishes still in flight after ${timeoutMs} ms were abandoned; their events stay pending and are sent again later.`,
        );
      }
      const keep = !finished && this.deps.keepLeaseAfterAbandon === true;
      if (keep) {
        this.lease.lost();
        this.logger.warn(
          'The lease is left to expire, not released, since publishes were abandoned.',
        );
      }
      if (release && !keep && this.options.lease.enabled && this.lease.fencing !== undefined) {
        try {
          await this.lease.release();
        } catch (error) {
          this.logger.warn(
            `Could not release the lease (it expires by itself): ${describeError(error)}`,
          );
        }
      }
    })();
    await this.ending;
  }
}
