import type { Connection } from 'mongoose';
import { OUTBOX_DEFAULT_COLLECTIONS } from '../../../lib/common/outbox-storage.options';
import { MongoRelayPartitions } from '../../../lib/relay/mongo/mongo-relay-partitions';
import { RELAY_DEFAULTS } from '../../../lib/relay/relay.options';

/** Who holds which partition right now (valid leases, on the server's time). */
export interface PartitionSpread {
  /** The stored layout's partition count (1 without a stored layout: the single lease). */
  partitions?: number;
  /** owner -> partitions it holds; owners are `host:pid:suffix`. */
  byOwner: Map<string, number[]>;
  /** Partitions no valid lease covers. */
  free: number[];
}

/** Reads the partition leases of relay `name` through the library's own MongoDB ports. */
export async function readSpread(
  connection: Connection,
  relayName = RELAY_DEFAULTS.name,
): Promise<PartitionSpread> {
  const ports = new MongoRelayPartitions(connection.db!, {
    collections: OUTBOX_DEFAULT_COLLECTIONS,
    relayName,
    batchSize: 1,
    idleMs: 100,
  });
  // Without a stored layout: the single relay lease (`partitions: 1`), as one partition.
  const layout = await ports.membership.layout();
  const partitions = layout?.partitions ?? 1;
  const byOwner = new Map<string, number[]>();
  const now = await ports.scope(layout ?? { partitions, generation: 0 }, 0).state.serverTime();
  const leases = await ports.membership.leases(layout);
  const held = new Set<number>();
  for (const lease of leases) {
    if (lease.expiresAt.getTime() <= now.getTime()) continue;
    held.add(lease.partition);
    byOwner.set(lease.owner, [...(byOwner.get(lease.owner) ?? []), lease.partition]);
  }
  const free = Array.from({ length: partitions }, (_, p) => p).filter((p) => !held.has(p));
  return { partitions, byOwner, free };
}

/** The pid in an owner string (`host:pid:suffix`). */
export function ownerPid(owner: string): number {
  return Number(owner.split(':').at(-2));
}

/**
 * Even: every partition held, by live relays only, each holding floor or ceil of
 * partitions / relays.
 */
export function isEven(spread: PartitionSpread, livePids: number[]): boolean {
  if (spread.partitions === undefined || spread.free.length > 0) return false;
  const counts = livePids.map(
    (pid) => [...spread.byOwner].find(([owner]) => ownerPid(owner) === pid)?.[1].length ?? 0,
  );
  const owners = [...spread.byOwner.keys()].map(ownerPid);
  if (owners.some((pid) => !livePids.includes(pid))) return false;
  const low = Math.floor(spread.partitions / livePids.length);
  const high = Math.ceil(spread.partitions / livePids.length);
  return counts.every((count) => count >= low && count <= high);
}

export function describeSpread(spread: PartitionSpread): string {
  const parts = [...spread.byOwner]
    .sort(([a], [b]) => ownerPid(a) - ownerPid(b))
    .map(
      ([owner, held]) => `pid ${ownerPid(owner)}: [${[...held].sort((a, b) => a - b).join(',')}]`,
    );
  if (spread.free.length > 0) parts.push(`free: [${spread.free.join(',')}]`);
  return parts.join('  ');
}
