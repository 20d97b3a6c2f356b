import type { ChangeSource } from './change-source';
import type { OutboxRelayStore } from './outbox-relay.store';
import type { LeaseGrant, RelayStateStore } from './relay-state.store';

/**
 * How the outbox is split among relays: `partitions` contiguous slot ranges
 * (`slotsOfPartition`). `generation` goes up by one with every switch.
 */
export interface RelayLayout {
  partitions: number;
  generation: number;
}

/** A live relay instance as its last heartbeat described it (times: the server's clock). */
export interface RelayMember {
  owner: string;
  /** The number of partitions this instance is configured with. */
  partitions: number;
  /** Partitions it held at its last heartbeat. */
  holding: number[];
  expiresAt: Date;
}

/** One partition's lease as stored (expired ones included). */
export type PartitionLease = LeaseGrant & { partition: number };

/**
 * What relays share to split the outbox (MongoDB: documents in `collections.relayState`,
 * written with `w: 'majority'`, read from the primary at read concern majority, every time
 * the server's time).
 *
 * Fencing numbers of every lease (every partition, every layout, and the single lease of
 * `partitions: 1`) come from one counter, so they only go up across partitions and layout
 * switches: the owner stamp on outbox documents (`relayFence`) stays meaningful when an
 * aggregate's events move to another partition.
 */
export interface RelayMembershipStore {
  /** Records that `owner` is alive until `expiresAt` (server time) and what it holds. */
  heartbeat(member: RelayMember): Promise<void>;
  /** Members whose heartbeat expires after `serverNow`, by `owner`. */
  liveMembers(serverNow: Date): Promise<RelayMember[]>;
  /** Removes `owner`'s heartbeat (a graceful stop), so the others rebalance at once. */
  leave(owner: string): Promise<void>;
  /**
   * The stored layout; undefined when none was ever stored (a deployment that only ever ran
   * `partitions: 1`: its lease is the single relay lease).
   */
  layout(): Promise<RelayLayout | undefined>;
  /**
   * The leases of every partition of `layout` (for `partitions: 1` without a stored layout:
   * the single relay lease), expired ones included.
   */
  leases(layout: RelayLayout | undefined): Promise<PartitionLease[]>;
  /**
   * Switches to `partitions`, only if the stored layout is still `expected` (by `generation`;
   * undefined: none stored) and no lease of `expected` is valid when the switch applies: a check
   * by the caller before (`leases`) is not enough, so the switch closes every expired lease of
   * `expected` itself and gives up when one is valid (MongoDB: `RelayLayoutSwitch`). It also
   * closes the single relay lease to relays of older versions (reopens it, at a fencing number
   * above every one given so far, for `partitions: 1`). The new layout, or undefined when
   * nothing changed (another instance switches or switched first, or a lease is valid).
   */
  switchLayout(
    expected: RelayLayout | undefined,
    partitions: number,
  ): Promise<RelayLayout | undefined>;
}

/** The relay ports narrowed to one partition. */
export interface PartitionScope {
  /** Reads only events whose `slot` lies in the partition's range; writes by `_id` as before. */
  outbox: OutboxRelayStore;
  /** A change stream filtered on the server to inserts whose `slot` lies in the range. */
  changes: ChangeSource;
  /** This partition's lease (fencing from the shared counter) and its own checkpoint. */
  state: RelayStateStore;
}

export interface RelayPartitionPorts {
  membership: RelayMembershipStore;
  /** The ports of partition `partition` of `layout`. */
  scope(layout: RelayLayout, partition: number): PartitionScope;
  /** See `OutboxRelayStore.stampMissingSlots` (here for the whole outbox). */
  stampMissingSlots(limit: number): Promise<number>;
}
