import { relayStateIds } from './stored-checkpoint.reader';

/**
 * `_id`s of the partitioned relay's documents in `collections.relayState`, for relay `name`
 * (next to the single relay's `lease:<name>` and `checkpoint:<name>`):
 * - `layout:<name>`: the stored layout `{ partitions, generation }`;
 * - `fencing:<name>`: the counter every partition lease takes its fencing number from
 *   (`{ value }`);
 * - `member:<name>:<owner>`: one instance's heartbeat (`{ relay, owner, partitions, holding,
 *   expiresAt }`);
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
