import { relayStateIds } from './relay-state.document';

/**
 * `_id`s of the partitioned relay's documents in `collections.relayState`, for relay `name`
 * (next to the single relay's `lease:<name>` and `checkpoint:<name>`):
 * - `layout:<name>`: the stored layout (`RelayLayoutDoc`);
 * - `fencing:<name>`: the counter every partition lease takes its fencing number from
 *   (`FencingCounterDoc`);
 * - `member:<name>:<owner>`: one instance's heartbeat (`RelayMemberDoc`);
 * - `lease:<name>:g<generation>:p<partition>` and `checkpoint:<name>:g<generation>:p<partition>`:
 *   one partition's lease and checkpoint. The layout's generation is part of the name, so a new
 *   layout starts without leases or checkpoints (its streams open at the majority commit point
 *   and drain the collection), and no lease of an older layout can be mistaken for one of it.
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

/** `fencing:<name>`: the last fencing number handed out. */
export interface FencingCounterDoc {
  _id: string;
  value?: number;
}
