import { describeError } from '../../common/errors/describe-error';
import { outboxDiagnostics } from '../../diagnostics/outbox.diagnostics';
import { everyInTurn, type RelayJob } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import { PublisherConnection } from '../publisher-connection';
import type {
  PartitionLease,
  RelayLayout,
  RelayPartitionPorts,
} from '../ports/relay-partitions.store';
import type { RelayNodeDeps } from '../relay-node.deps';
import type { OutboxRelayMetrics } from '../relay.metrics';
import { RelayNode } from '../relay.node';
import type { ResolvedRelayOptions } from '../relay.options';
import type { PartitionStatus, RelayStatus } from '../relay.status';
import { combinedStatus } from '../term/combined-status';
import { combinedTenants } from '../tenants/tenants-status';
import { LayoutGate } from './layout.gate';
import { aggregateGauges, partitionMetrics } from './partition.metrics';
import { planShare } from './partition-share';
import { PartitionRelay } from './partition.relay';
import { SharedInFlight } from './shared-in-flight';

export type PartitionedRelayNodeDeps = RelayNodeDeps & { partitions: RelayPartitionPorts };

/** Slot backfill rounds (of `batchSize` documents) per sweep tick. */
const STAMP_ROUNDS = 10;

/**
 * One relay instance of a deployment that splits the outbox into `relay.partitions`
 * partitions (`PartitionScope`: a slot range, its lease, fencing number and checkpoint).
 *
 * With `partitions: 1` and no other layout stored, it is exactly a `RelayNode` (the single
 * lease, the single checkpoint). Otherwise, every `lease.renewMs` it: checks the stored layout
 * (`LayoutGate`: relays nothing while another layout's leases are valid, then switches),
 * heartbeats (server time) with the partitions it holds, reads the live members and the
 * partitions' leases, and follows the fair-share plan (`planShare`): hands over extras
 * gracefully, takes free partitions by rendezvous preference. Each held partition runs its
 * own `RelayNode` (`PartitionRelay`) sharing the publisher and one in-flight budget. The
 * owner of partition 0 stamps `slot` on documents written without it, each sweep tick, so that
 * the partitions' sweeps and lag figures see them (their order does not wait for it: see
 * `stampSlotsBeforeRangeReads` and `MongoChangeSource`).
 */
export class PartitionedRelayNode {
  private readonly logger: RelayLogger;
  private readonly connection: PublisherConnection;
  private readonly gate: LayoutGate;
  private readonly budget: SharedInFlight;
  private single?: RelayNode;
  private running = false;
  private layout?: RelayLayout;
  private readonly relays = new Map<number, PartitionRelay>();
  private readonly metricsOf = new Map<number, OutboxRelayMetrics>();
  private readonly starting = new Set<Promise<void>>();
  /**
   * Partitions whose relay is stopping (handed over or lost): not taken again until it
   * stopped, so one process never runs two terms of a partition (they share the owner name,
   * and a late acquire of the old one would fence the new one off).
   */
  private readonly retiring = new Map<number, Promise<void>>();
  private leases = new Map<number, PartitionLease>();
  /** The server time the leases were read at, and this process's monotonic time then. */
  private leasesReadAt = { server: 0, monotonic: 0 };
  private ticker?: RelayJob;
  private stamper?: RelayJob;

  constructor(
    private readonly options: ResolvedRelayOptions,
    private readonly deps: PartitionedRelayNodeDeps,
  ) {
    this.logger = deps.loggers('RelayPartitions');
    this.connection = new PublisherConnection(deps.publisher, this.logger);
    this.gate = new LayoutGate(deps.partitions.membership, options.partitions, this.logger);
    this.budget = new SharedInFlight(options.maxInFlight, options.maxInFlightBytes);
  }

  /** Whether this instance publishes (holds the single lease, or at least one partition). */
  get isLeader(): boolean {
    if (this.single) return this.single.isLeader;
    return [...this.relays.values()].some((relay) => relay.isLeader);
  }

  get isRunning(): boolean {
    return this.running;
  }

  holding(): number[] {
    return [...this.relays.values()]
      .filter((relay) => relay.isLeader && !relay.isStopping)
      .map((relay) => relay.partition)
      .sort((a, b) => a - b);
  }

  /** Starts (idempotent); resolves after the first membership tick. Work goes on in the background. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    if (this.options.partitions === 1 && (await this.singleLayoutStored())) {
      if (!this.running) return;
      this.single = new RelayNode(this.options, this.deps);
      this.connection.open();
      await this.single.start();
      return;
    }
    if (!this.running) return;
    this.connection.open();
    await this.tick();
    if (!this.running || this.single) return;
    const { clock } = this.deps;
    const name = `nestjs-outbox:relay:${this.options.name}`;
    const { renewMs } = this.options.lease;
    this.ticker = everyInTurn(clock, `${name}:partitions`, renewMs, () => this.tick());
    const sweepMs = this.options.sweepIntervalMs;
    this.stamper = everyInTurn(clock, `${name}:slots`, sweepMs, () => this.stampSlots());
  }

  /** Hands every partition over (see `RelayNode.stop`), leaves the membership. Never throws. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    try {
      if (this.single) {
        await this.single.stop();
        await this.connection.close();
        return;
      }
      await Promise.all([this.ticker?.stop(), this.stamper?.stop()]);
      await Promise.allSettled([...this.starting]);
      await this.stopAll();
      await this.deps.partitions.membership.leave(this.deps.owner).catch((error: unknown) => {
        this.logger.warn(`Could not leave the membership (it expires): ${describeError(error)}`);
      });
      await this.connection.close();
    } catch (error) {
      this.logger.error(`Error while stopping the relay (ignored): ${describeError(error)}`);
    }
  }

  status(): RelayStatus {
    if (this.single) return this.single.status();
    const own = [...this.relays.values()].filter((relay) => relay.isLeader);
    const statuses = own.map((relay) => relay.node.status());
    const count = this.layout?.partitions ?? this.options.partitions;
    const partitions = Array.from({ length: count }, (_, partition): PartitionStatus => {
      const relay = this.relays.get(partition);
      if (!relay?.isLeader) {
        const lease = this.leases.get(partition);
        return {
          partition,
          owner: lease && lease.expiresAt.getTime() > this.serverNow() ? lease.owner : undefined,
          owned: false,
          fencing: lease?.fencing,
          stream: 'stopped',
        };
      }
      const status = relay.node.status();
      const metrics = this.metricsOf.get(partition);
      return {
        partition,
        owner: this.deps.owner,
        owned: true,
        fencing: status.fencing,
        stream: status.stream,
        inFlight: status.inFlight,
        pendingCount: metrics?.pendingCount,
        oldestPendingAgeMs: metrics?.oldestPendingAgeMs,
      };
    });
    const tenants = combinedTenants(statuses.map((status) => status.tenants));
    return {
      running: this.running,
      role: !this.running ? 'stopped' : own.length > 0 ? 'leader' : 'standby',
      ...combinedStatus(statuses, { events: this.budget.events, bytes: this.budget.bytes }),
      partitions,
      ...(tenants ? { tenants } : {}),
    };
  }

  /** The database server's time as last read, plus the time elapsed since (ms). */
  private serverNow(): number {
    const { server, monotonic } = this.leasesReadAt;
    return server + (this.deps.clock.monotonic() - monotonic);
  }

  private async singleLayoutStored(): Promise<boolean> {
    try {
      const stored = await this.deps.partitions.membership.layout();
      return stored === undefined || stored.partitions === 1;
    } catch (error) {
      // Unknown yet: the partitioned path reads it again every tick (and runs P=1 after a switch).
      this.logger.warn(`Could not read the relay layout (retrying): ${describeError(error)}`);
      return false;
    }
  }

  // ---------------------------------------------------------------- membership tick

  private async tick(): Promise<void> {
    if (!this.running || this.single) return;
    try {
      await this.step();
    } catch (error) {
      this.logger.warn(`Relay membership check failed (retrying): ${describeError(error)}`);
    }
    aggregateGauges(this.deps.metrics, [...this.metricsOf.values()]);
  }

  private async step(): Promise<void> {
    const { membership } = this.deps.partitions;
    const serverNow = await this.deps.state.serverTime();
    const verdict = await this.gate.check(serverNow);
    if (!this.running) return;
    if (verdict.kind === 'wait' || verdict.layout === undefined) {
      // Not ours (or ours is the single lease, which P=1 takes below): relay nothing of it.
      if (this.relays.size > 0) await this.stopAll();
      if (verdict.kind === 'run' && this.options.partitions === 1) await this.becomeSingle();
      return;
    }
    const layout = verdict.layout;
    if (this.layout && this.layout.generation !== layout.generation) {
      this.logger.log(
        `The relay layout changed (generation ${this.layout.generation} -> ${layout.generation}); partitions are taken anew.`,
      );
      await this.stopAll();
    }
    this.layout = layout;
    if (layout.partitions === 1) {
      await this.becomeSingle();
      return;
    }
    this.forgetEnded();
    const expiresAt = new Date(serverNow.getTime() + this.options.lease.durationMs);
    await membership.heartbeat({
      owner: this.deps.owner,
      partitions: layout.partitions,
      holding: this.holding(),
      expiresAt,
    });
    const members = (await membership.liveMembers(serverNow)).filter(
      (member) => member.partitions === layout.partitions,
    );
    const leases = await membership.leases(layout);
    if (!this.running || this.starting.size > 0) return; // plan again once they know
    this.leases = new Map(leases.map((lease) => [lease.partition, lease]));
    this.leasesReadAt = { server: serverNow.getTime(), monotonic: this.deps.clock.monotonic() };
    const free: number[] = [];
    for (let partition = 0; partition < layout.partitions; partition++) {
      const lease = this.leases.get(partition);
      if (this.relays.has(partition)) continue;
      if (this.retiring.has(partition)) continue;
      if (!lease || lease.expiresAt.getTime() <= serverNow.getTime()) free.push(partition);
    }
    const plan = planShare({
      owner: this.deps.owner,
      partitions: layout.partitions,
      members,
      holding: this.holding(),
      free,
    });
    for (const partition of plan.release) this.release(partition, plan.max);
    for (const partition of plan.take) this.take(layout, partition);
  }

  /** Partition relays that lost their lease are stopped and forgotten. */
  private forgetEnded(): void {
    for (const [partition, relay] of this.relays) {
      if (!relay.hasStarted || relay.isLeader || relay.isStopping) continue;
      this.logger.log(`Lost partition ${partition}; it is taken anew if free.`);
      this.retire(partition, relay);
    }
  }

  /** Stops `relay` (in the background) and forgets it once stopped. */
  private retire(partition: number, relay: PartitionRelay): Promise<void> {
    this.forget(partition, relay);
    const stopped = relay.stop().finally(() => {
      if (this.retiring.get(partition) === stopped) this.retiring.delete(partition);
    });
    this.retiring.set(partition, stopped);
    this.track(stopped);
    return stopped;
  }

  private take(layout: RelayLayout, partition: number): void {
    if (!this.running || this.relays.has(partition) || this.retiring.has(partition)) return;
    const metrics = partitionMetrics(this.deps.metrics);
    const scope = this.deps.partitions.scope(layout, partition);
    const deps = { options: this.options, base: this.deps, budget: this.budget, metrics };
    const relay = new PartitionRelay(layout, partition, scope, deps);
    this.relays.set(partition, relay);
    this.metricsOf.set(partition, metrics);
    const started = relay.start().then(() => {
      if (relay.isLeader) {
        this.logger.log(`Took partition ${partition} of ${layout.partitions}.`);
        return;
      }
      // Another instance took it first: give up (stop() of a node without a lease is quick).
      void this.retire(partition, relay);
    });
    this.trackStart(started);
  }

  private release(partition: number, share: number): void {
    const relay = this.relays.get(partition);
    if (!relay || relay.isStopping) return;
    this.logger.log(
      `Hands partition ${partition} over (fair share: at most ${share} per live instance).`,
    );
    outboxDiagnostics.relayPartitionHandedOver(
      this.options.name,
      this.deps.owner,
      partition,
      relay.layout.partitions,
      share,
    );
    // Stays counted as ours (in `relays`) until stopped: the lease is released at the end.
    this.track(relay.stop().finally(() => this.forget(partition, relay)));
  }

  /** Drops `relay` from the partitions this instance counts as its own, unless replaced since. */
  private forget(partition: number, relay: PartitionRelay): void {
    if (this.relays.get(partition) !== relay) return;
    this.relays.delete(partition);
    this.metricsOf.delete(partition);
  }

  private async stopAll(): Promise<void> {
    await Promise.allSettled([...this.starting]);
    for (const [partition, relay] of [...this.relays]) void this.retire(partition, relay);
    await Promise.allSettled([...this.retiring.values()]);
  }

  /** After a switch to one partition: the single lease, as a plain `RelayNode`. */
  private async becomeSingle(): Promise<void> {
    if (this.single || !this.running || this.options.partitions !== 1) return;
    // Not awaited: this runs within a tick.
    void this.ticker?.stop();
    void this.stamper?.stop();
    this.single = new RelayNode(this.options, this.deps);
    await this.single.start();
  }

  private trackStart(promise: Promise<void>): void {
    const tracked = this.track(promise).finally(() => this.starting.delete(tracked));
    this.starting.add(tracked);
  }

  private track(promise: Promise<void>): Promise<void> {
    return promise.catch((error: unknown) => {
      this.logger.error(`Partition hand-over failed unexpectedly: ${describeError(error)}`);
    });
  }

  // ---------------------------------------------------------------- slot backfill

  /** The owner of partition 0 stamps `slot` on documents written before slots (bounded per tick). */
  private async stampSlots(): Promise<void> {
    const first = this.relays.get(0);
    if (!this.running || !first?.isLeader || first.isStopping) return;
    try {
      for (let round = 0; round < STAMP_ROUNDS; round++) {
        const stamped = await this.deps.partitions.stampMissingSlots(this.options.batchSize);
        if (stamped > 0 && round === 0) {
          this.logger.log(
            `Stamping slots on documents written without one (${stamped} so far this round).`,
          );
        }
        if (stamped < this.options.batchSize || !first.isLeader) return;
      }
    } catch (error) {
      this.logger.warn(`Could not stamp slots (retried next sweep): ${describeError(error)}`);
    }
  }
}
