export const RELAY_STATE_COLLECTION = 'outbox_relay_state'; // the option's default

/** `_id`s of a relay's documents in `collections.relayState`. */
export function relayStateIds(relayName: string): { lease: string; checkpoint: string } {
  return { lease: `lease:${relayName}`, checkpoint: `checkpoint:${relayName}` };
}

/** A lease: `lease:<name>`, or a partition's `lease:<name>:g<generation>:p<partition>`. */
export interface RelayLeaseDoc {
  _id: string;
  owner?: string;
  /** Rises with every leader; relay writes carry it (`relayFence` on outbox documents). */
  fencing?: number;
  /** Server times. */
  expiresAt?: Date;
  acquiredAt?: Date;
  /** A partition's lease: which, of how many, of which layout. */
  partition?: number;
  partitions?: number;
  generation?: number;
  /** Closed by a switch: its claim's number; the single lease as gate: the layout that set it. */
  switchClaim?: number;
  layoutGeneration?: number;
}

/** A checkpoint: `checkpoint:<name>`, or a partition's (named as its lease). */
export interface RelayCheckpointDoc {
  _id: string;
  /** Of the leader that last claimed or wrote it. */
  fencing?: number;
  /** The change stream's resume token; absent (or null): start from the collection. */
  token?: unknown;
  savedAt?: Date;
}

/**
 * Owners of a closed lease (until `LEASE_CLOSED_UNTIL`: no relay of any version takes or renews
 * it): the single lease under a layout of several partitions; an old layout's lease after a switch.
 */
export const CLOSED_BY_LAYOUT = 'closed-by-partitioned-layout';
export const CLOSED_BY_SWITCH = 'closed-by-layout-switch';
export const LEASE_CLOSED_UNTIL = new Date('9999-12-31T00:00:00Z');

/** Either, as the state store reads and writes them through one collection. */
export type RelayStateDoc = RelayLeaseDoc & RelayCheckpointDoc;

/**
 * `_id`s of the partitioned relay's documents in `collections.relayState`, for relay `name`,
 * next to the single relay's: the layout, the fencing counter, members, and each partition's
 * `lease:<name>:g<generation>:p<partition>` and `checkpoint:...`. The layout's generation is part
 * of the name, so a new layout starts without leases or checkpoints (its streams open at the
 * majority commit point and drain the collection), and no lease of an older layout can be
 * mistaken for one of it.
 */
export function partitionedRelayIds(name: string) {
  const single = relayStateIds(name);
  return {
    single,
    layout: `layout:${name}`,
    fencing: `fencing:${name}`,
    memberPrefix: `member:${name}:`,
    member: (owner: string) => `member:${name}:${owner}`,
    partition: (generation: number, partition: number) => ({
      lease: `${single.lease}:g${generation}:p${partition}`,
      checkpoint: `${single.checkpoint}:g${generation}:p${partition}`,
    }),
  };
}

export type PartitionedRelayIds = ReturnType<typeof partitionedRelayIds>;

/** The claim of the instance that is switching the layout away from `generation`. */
export interface SwitchClaim {
  token: string;
  /** The server's time when it was claimed. */
  at: Date;
  partitions: number;
}

/**
 * `layout:<name>`. `generation: 0` without `partitions` stands for "no layout stored" (a
 * document that only carries a claim, or the count of claims); `claims` counts every claim
 * ever made on it, so a claim's number is above every earlier claim's.
 */
export interface RelayLayoutDoc {
  _id: string;
  partitions?: number;
  generation: number;
  switchedAt?: Date;
  claims?: number;
  switching?: SwitchClaim;
}

/** `member:<name>:<owner>`: one instance's heartbeat. */
export interface RelayMemberDoc {
  _id: string;
  relay: string;
  owner: string;
  partitions: number;
  holding: number[];
  expiresAt: Date;
}

/** `fencing:<name>`: the counter every partition lease takes its fencing number from. */
export interface FencingCounterDoc {
  _id: string;
  value?: number;
}
