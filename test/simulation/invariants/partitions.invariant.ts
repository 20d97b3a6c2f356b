import { partitionOfSlot } from '../../../lib/relay/ports/partition-layout';
import type { RelayLayout } from '../../../lib/relay/ports/relay-partitions.store';
import { partitionScope, SINGLE_SCOPE } from '../mongo/sim-database';
import { SIM_EPOCH_MS } from '../process/sim-process';
import type { LeaseFact } from '../world/sim.history';
import type { SimRunOutcome, SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/**
 * (p) Partitions (partitioned runs only):
 * - one effective owner per partition: no send of a partition's events is issued by a relay
 *   while another relay holds that partition's lease (by the server's clock), in the layout in
 *   force then (so two layouts never publish at once either); sends issued with no valid
 *   lease at all are counted (they can only add duplicates);
 * - at the end (churn over), the stored layout is the one the live relays are configured
 *   with, every partition is held by exactly one live relay, which holds its lease and
 *   follows its stream, and the spread is fair: between floor and ceil of P / live relays.
 * Per-aggregate order across hand-overs is (b)'s; one lease holder at a time is (g)'s.
 */
export class PartitionsInvariant implements InvariantChecker {
  readonly id = 'p';
  readonly name = 'partitions';
  private readonly violations: string[] = [];
  private checked = 0;
  private spread?: string;

  beforeStop(world: SimWorld): void {
    // Judged only when everything was out and the run went on quietly for `settle`.
    if (!world.partitioned || !world.resolved) return;
    const running = world
      .statuses()
      .filter(({ node, status }) => status.running && !node.leaving && !node.stopped);
    if (running.length === 0) return;
    const stored = world.db.layout?.partitions ?? 1;
    this.checked++;
    // Relays configured with another layout (started late with the old one) relay nothing.
    const live = running.filter(({ node }) => (node.partitions ?? 1) === stored);
    for (const { node, status } of running) {
      if ((node.partitions ?? 1) !== stored && status.role !== 'standby') {
        this.violations.push(
          `${world.now}: ${node.process.name} (configured with ${node.partitions ?? 1} partitions) is ${status.role} under a layout of ${stored}`,
        );
      }
    }
    if (live.length === 0) {
      this.violations.push(
        `${world.now}: the stored layout has ${stored} partition(s), no live relay is configured with it (${running
          .map(({ node }) => node.partitions ?? 1)
          .join(', ')})`,
      );
      return;
    }
    if (stored === 1) return; // the single leader: (h) judges it
    const layout = world.db.layout as RelayLayout;
    const holders = new Map<number, string[]>();
    const counts: string[] = [];
    for (const { node, status } of live) {
      const owned = (status.partitions ?? []).filter((partition) => partition.owned);
      counts.push(`${node.process.name}: ${owned.length}`);
      for (const partition of owned) {
        holders.set(partition.partition, [
          ...(holders.get(partition.partition) ?? []),
          node.process.name,
        ]);
        const scope = partitionScope(layout, partition.partition);
        if (!world.db.holdsLease(node.owner ?? '?', undefined, scope)) {
          this.violations.push(
            `${world.now}: ${node.process.name} says it owns partition ${partition.partition} but does not hold its lease`,
          );
        }
        if (partition.stream !== 'following') {
          this.violations.push(
            `${world.now}: partition ${partition.partition}'s stream on ${node.process.name} is ${partition.stream}, not following`,
          );
        }
      }
      const min = Math.floor(stored / live.length);
      const max = Math.ceil(stored / live.length);
      if (owned.length < min || owned.length > max) {
        this.violations.push(
          `${world.now}: ${node.process.name} owns ${owned.length} of ${stored} partitions with ${live.length} live relays (fair: ${min}-${max})`,
        );
      }
    }
    for (let partition = 0; partition < stored; partition++) {
      const owners = holders.get(partition) ?? [];
      if (owners.length !== 1) {
        this.violations.push(
          `${world.now}: partition ${partition} is owned by ${owners.length} live relays (${owners.join(', ')})`,
        );
      }
    }
    this.spread = `${stored} partitions over ${live.length} relays: ${counts.join(', ')}`;
  }

  finish(world: SimWorld, outcome: SimRunOutcome): InvariantResult {
    void outcome;
    if (!world.partitioned) {
      return { id: this.id, name: this.name, checked: 0, violations: [] };
    }
    const { history } = world;
    const leases = new Map<string, LeaseFact[]>();
    for (const lease of history.leases) {
      const scope = lease.scope ?? SINGLE_SCOPE;
      leases.set(scope, [...(leases.get(scope) ?? []), lease]);
    }
    const holderAt = (scope: string, at: number): string | undefined => {
      let holder: { node: string; owner: string; expiresAt: number } | undefined;
      for (const lease of leases.get(scope) ?? []) {
        if (lease.at > at) break;
        if (lease.kind === 'acquire') holder = { ...lease };
        else if (holder && lease.owner === holder.owner) holder.expiresAt = lease.expiresAt;
      }
      return holder && holder.expiresAt - SIM_EPOCH_MS > at ? holder.node : undefined;
    };
    const layoutAt = (at: number): RelayLayout | undefined => {
      let layout: RelayLayout | undefined;
      for (const change of history.layoutSwitches) if (change.at <= at) layout = change;
      return layout;
    };
    const violations = [...this.violations];
    let withoutLease = 0;
    let checked = this.checked;
    for (const call of history.sendCalls) {
      const layout = layoutAt(call.issuedAt);
      for (const eventId of call.eventIds) {
        const slot = history.commits.get(eventId)?.aggregateSlot;
        if (slot === undefined) continue;
        checked++;
        const scope =
          layout && layout.partitions > 1
            ? partitionScope(layout, partitionOfSlot(slot, layout.partitions))
            : SINGLE_SCOPE;
        const holder = holderAt(scope, call.issuedAt);
        if (holder === undefined) withoutLease++;
        else if (holder !== call.node) {
          violations.push(
            `${call.issuedAt}: ${call.node} sent ${eventId} (${scope}) while ${holder} held that partition's lease`,
          );
        }
      }
    }
    return {
      id: this.id,
      name: this.name,
      checked,
      violations: capped(violations),
      counts: { 'event sends issued without the partition lease': withoutLease },
    };
  }

  /** The spread at the end of the run (for reports). */
  get lastSpread(): string | undefined {
    return this.spread;
  }
}
