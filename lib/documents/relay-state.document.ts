/** Default of `collections.relayState`: leases, checkpoints, and the partitions' documents. */
export const RELAY_STATE_COLLECTION = 'outbox_relay_state';

/** `_id`s of a relay's documents in `collections.relayState`. */
export function relayStateIds(relayName: string): { lease: string; checkpoint: string } {
  return { lease: `lease:${relayName}`, checkpoint: `checkpoint:${relayName}` };
}

/**
 * A lease: `lease:<name>` (the single relay's), or a partition's
 * `lease:<name>:g<generation>:p<partition>` (`partitionedRelayIds`).
 */
export interface RelayLeaseDoc {
  _id: string;
  owner?: string;
  /** Rises with every leader: relay writes carry it (`relayFence` on outbox documents). */
  fencing?: number;
  /** The server's time. */
  expiresAt?: Date;
  acquiredAt?: Date;
  /** On a partition's lease: which, of how many, in which layout. */
  partition?: number;
  partitions?: number;
  generation?: number;
  /** On a lease a layout switch closed: the number of the switch's claim. */
  switchClaim?: number;
  /** On the single lease used as the gate between layouts: the layout that set it. */
  layoutGeneration?: number;
}

/** A checkpoint: `checkpoint:<name>`, or a partition's `checkpoint:<name>:g<generation>:p<partition>`. */
export interface RelayCheckpointDoc {
  _id: string;
  /** The fencing number of the leader that last claimed or wrote it. */
  fencing?: number;
  /** The change stream's resume token; absent (or null) when the relay starts from the collection. */
  token?: unknown;
  savedAt?: Date;
}

/** Either, as the state store reads and writes them through one collection. */
export type RelayStateDoc = RelayLeaseDoc & RelayCheckpointDoc;
