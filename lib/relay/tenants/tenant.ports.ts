import type { ChangeSource } from '../ports/change-source';
import type { OutboxRelayStore } from '../ports/outbox-relay.store';
import type { RelayLayout } from '../ports/relay-partitions.store';
import type { RelayStateStore } from '../ports/relay-state.store';

/** What one tenant database's relay term reads and writes. */
export interface TenantDatabasePorts {
  /** The outbox and dead letters of that database. */
  outbox: OutboxRelayStore;
  /** Its checkpoint (kept in the app's database); the lease is the term's, never this one's. */
  state: RelayStateStore;
  /** Its outbox's inserts: its part of the cluster-wide stream, or a stream of its own. */
  changes: ChangeSource;
}

/** The cluster-wide stream's reading of databases that have no term (see `RestingDatabases`). */
export interface TenantWatch {
  /**
   * Reads the changes of `databases` (replacing the previous set); a change of one calls `wake`,
   * which says whether it woke (its changes then wait for its subscription).
   */
  watch(databases: Iterable<string>, wake: (database: string) => boolean): void;
  /** Stops, unless another `wake` watches now. */
  unwatch(wake: (database: string) => boolean): void;
  /** Whether the open stream reads `database`'s changes. */
  covers(database: string): boolean;
}

/** The tenant databases of a relay (MongoDB: `MongoTenantPorts`; the simulation: its own). */
export interface TenantPorts {
  /** The databases to follow now (re-read every sweep interval). */
  databases(): Promise<readonly string[]>;
  /** The ports of one database, for one term (`fencing`). */
  forDatabase(database: string, fencing: number | null): TenantDatabasePorts;
  /**
   * With the cluster-wide stream: databases without work rest (no term) while the stream reads
   * their changes. Without it, every followed database keeps a term.
   */
  watch?: TenantWatch;
  /** Whether `database`'s outbox has a pending event, scheduled ones too (one query). */
  hasPending?(database: string): Promise<boolean>;
  /**
   * The same databases narrowed to partition `partition` of `layout` (`relay.partitions` > 1):
   * every database's outbox reads and stream limited to the partition's slots
   * (`slotsOfPartition`), its checkpoint its own per (database, partition), its resting
   * databases woken by that partition's changes only. The lease stays the partition's, in the
   * app's database (`RelayPartitionPorts`): nothing of it is per tenant. The list of databases
   * is the same for every partition.
   */
  forPartition(layout: RelayLayout, partition: number): TenantPorts;
}
