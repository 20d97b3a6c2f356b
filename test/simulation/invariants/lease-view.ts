import { partitionOfSlot } from '../../../lib/relay/ports/partition-layout';
import type { RelayLayout } from '../../../lib/relay/ports/relay-partitions.store';
import { partitionScope, SINGLE_SCOPE } from '../mongo/sim-database';
import { SIM_EPOCH_MS } from '../process/sim-process';
import type { LeaseFact, SendCallFact, SimHistory } from '../world/sim.history';

/** The holder of one lease at one instant, as the server saw it. */
export interface LeaseHolder {
  owner: string;
  node: string;
  /** Server time (virtual ms) at which it expires unless renewed. */
  until: number;
}

/**
 * The leases as the simulated server granted them (`history.leases`: acquires, renewals,
 * releases that landed), read back at any virtual time: who held a scope's lease then, by the
 * server's clock. Nothing here asks a relay.
 */
export class LeaseView {
  private readonly byScope = new Map<string, LeaseFact[]>();

  constructor(private readonly history: SimHistory) {
    for (const lease of history.leases) {
      const scope = lease.scope ?? SINGLE_SCOPE;
      const list = this.byScope.get(scope) ?? [];
      list.push(lease);
      this.byScope.set(scope, list);
    }
  }

  /** The valid holder of `scope`'s lease at `at` (expiry strictly after `at`), if any. */
  holderAt(scope: string, at: number): LeaseHolder | undefined {
    let holder: LeaseHolder | undefined;
    for (const lease of this.byScope.get(scope) ?? []) {
      if (lease.at > at) break;
      if (lease.kind === 'acquire')
        holder = { owner: lease.owner, node: lease.node, until: lease.expiresAt - SIM_EPOCH_MS };
      else if (holder && lease.owner === holder.owner)
        holder.until = lease.kind === 'release' ? lease.at : lease.expiresAt - SIM_EPOCH_MS;
    }
    return holder && holder.until > at ? holder : undefined;
  }

  /** The layout in force at `at` (undefined: the single lease, no layout switched yet). */
  layoutAt(at: number): RelayLayout | undefined {
    let layout: RelayLayout | undefined;
    for (const change of this.history.layoutSwitches) if (change.at <= at) layout = change;
    return layout;
  }

  /** The lease scope an event belongs to at `at`: its partition's in the layout then, or the single one. */
  scopeOfEvent(eventId: string, at: number): string {
    const layout = this.layoutAt(at);
    const slot = this.history.commits.get(eventId)?.aggregateSlot;
    if (!layout || layout.partitions <= 1 || slot === undefined) return SINGLE_SCOPE;
    return partitionScope(layout, partitionOfSlot(slot, layout.partitions));
  }

  /**
   * The events of a send whose lease the sending incarnation did not hold when the request
   * left it (server time): each with the scope and who held it instead (undefined: nobody).
   */
  unleasedEvents(
    call: SendCallFact,
  ): Array<{ eventId: string; scope: string; holder?: LeaseHolder }> {
    const result: Array<{ eventId: string; scope: string; holder?: LeaseHolder }> = [];
    for (const eventId of call.eventIds) {
      const scope = this.scopeOfEvent(eventId, call.issuedAt);
      const holder = this.holderAt(scope, call.issuedAt);
      if (holder?.owner !== call.owner) result.push({ eventId, scope, holder });
    }
    return result;
  }
}
