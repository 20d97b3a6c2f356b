import type { ScheduledStats } from './outbox-relay.store';
import type { StoredCheckpoint } from './relay-state.store';

/** What the database says of one partition of the stored layout. */
export interface StoredPartition {
  partition: number;
  /** Its lease as stored (expired or released ones included). */
  lease?: { owner: string; fencing?: number; expiresAt: Date };
  checkpoint?: StoredCheckpoint;
  /** `occurredAt` of its oldest pending event without `availableAt` (slot in its range), if any. */
  oldestPendingAt?: Date;
}

/** The stored layout of several partitions, and every partition's documents. */
export interface StoredPartitionedRelay {
  partitions: number;
  generation: number;
  each: StoredPartition[];
}

/**
 * The relay's stored state, read-only, as any instance sees it (health checks read it and never
 * touch the relay's collections), read as the relays read it (primary, read concern majority).
 */
export interface RelayStateReader {
  /** `occurredAt` of the oldest pending event of the outbox without `availableAt`, if any. */
  oldestPendingAt(): Promise<Date | undefined>;
  /** The pending scheduled events of the whole outbox at `now` (server time). */
  scheduledStats(now: Date): Promise<ScheduledStats>;
  /** The checkpoint the single relay `relayName` saved; undefined when it never saved one. */
  checkpoint(relayName: string): Promise<StoredCheckpoint | undefined>;
  /**
   * Relay `relayName`'s stored layout with each partition's lease, checkpoint and oldest
   * pending event; undefined when no layout is stored or it has one partition (the single
   * relay's lease and checkpoint then apply).
   */
  partitionedRelay(relayName: string): Promise<StoredPartitionedRelay | undefined>;
}
