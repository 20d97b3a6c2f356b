import type { StoredCheckpoint } from './relay-state.store';

/** A partition's lease as stored (expired or released ones included). */
export interface StoredPartitionLease {
  owner: string;
  fencing?: number;
  expiresAt: Date;
}

/** What the database says of one partition of the stored layout. */
export interface StoredPartition {
  partition: number;
  lease?: StoredPartitionLease;
  checkpoint?: StoredCheckpoint;
  /** `occurredAt` of its oldest pending event (slot in its range), if any. */
  oldestPendingAt?: Date;
}

/** The stored layout of several partitions, and every partition's documents. */
export interface StoredPartitionedRelay {
  partitions: number;
  generation: number;
  each: StoredPartition[];
}

/**
 * The relay's stored state, read-only, as any instance sees it (health checks read it; they
 * never touch the relay's collections themselves). Read from the primary at read concern
 * majority, as the relays read it.
 */
export interface RelayStateReader {
  /** `occurredAt` of the oldest pending event of the outbox, if any. */
  oldestPendingAt(): Promise<Date | undefined>;
  /** The checkpoint the single relay `relayName` saved; undefined when it never saved one. */
  checkpoint(relayName: string): Promise<StoredCheckpoint | undefined>;
  /**
   * Relay `relayName`'s stored layout with each partition's lease, checkpoint and oldest
   * pending event; undefined when no layout is stored or it has one partition (the single
   * relay's lease and checkpoint then apply).
   */
  partitionedRelay(relayName: string): Promise<StoredPartitionedRelay | undefined>;
}
