import type { RelayLayout } from '../../../lib/relay/ports/relay-partitions.store';
import { partitionScope } from '../mongo/sim-database';
import type { SimRunOutcome, SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';
import { LeaseView } from './lease-view';

/**
 * (p) Partitions (partitioned runs only):
 * - one effective owner per partition: every event of every send, as the broker's sender port
 *   saw the request leave a relay, belongs to a partition (in the layout in force then, so two
 *   layouts never publish at once either) whose lease the sending incarnation held at that
 *   virtual time by the server's record of leases (`LeaseView`); a send while another relay
 *   held it, or while nobody did (the sender's expired or was released), is a violation;
 * - at the end (churn over), the stored layout is the one the live relays are configured
 *   with, every partition is held by exactly one live relay, which holds its lease and
 *   follows its stream (unless a tenants relay has no database listed), and the spread is fair: between floor and ceil of P / live relays.
 * Per-aggregate order across hand-overs is (b)'s; one lease holder at a time is (g)'s.
 */
export class PartitionsInvariant implements InvariantChecker {
  readonly id = 'p';
  readonly name = 'partitions';
  private readonly violations: string[] = [];
  private checked = 0;

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
    // A tenants relay with no database listed has no stream to follow: its partitions'
    // terms stand by for the list to change (their stream `stopped`, as `worstStream([])`).
    const followsNothing = world.tenants !== undefined && world.tenants.list().length === 0;
    for (const { node, status } of live) {
      const owned = (status.partitions ?? []).filter((partition) => partition.owned);
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
        if (partition.stream !== 'following' && !followsNothing) {
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
  }

  finish(world: SimWorld, outcome: SimRunOutcome): InvariantResult {
    void outcome;
    if (!world.partitioned) {
      return { id: this.id, name: this.name, checked: 0, violations: [] };
    }
    const leases = new LeaseView(world.history);
    const violations = [...this.violations];
    let checked = this.checked;
    for (const call of world.history.sendCalls) {
      checked += call.eventIds.length;
      for (const { eventId, scope, holder } of leases.unleasedEvents(call)) {
        violations.push(
          `${call.issuedAt}: ${call.owner} sent ${eventId} (${scope}) ` +
            (holder
              ? `while ${holder.owner} held that partition's lease`
              : `while nobody held that partition's lease (the sender's had expired or was released)`),
        );
      }
    }
    return {
      id: this.id,
      name: this.name,
      checked,
      violations: capped(violations),
    };
  }
}
