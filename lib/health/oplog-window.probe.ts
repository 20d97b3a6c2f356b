import type { mongo } from 'mongoose';
import { describeError } from '../common/errors/describe-error';

/** How far back the oplog reaches: a resume token older than `firstEntryAt` can no longer be used. */
export type OplogWindow =
  | {
      available: true;
      /** Time of the oldest oplog entry. */
      firstEntryAt: Date;
      /** The server's time minus `firstEntryAt`, ms. */
      windowMs: number;
      /** Where the figure comes from. */
      source: 'local.oplog.rs' | 'serverStatus';
    }
  | { available: false; reason: string };

const UNAUTHORIZED = 13;

function timestampDate(ts: unknown): Date | undefined {
  const value = ts as { getHighBits?: () => number; high?: number } | null | undefined;
  const seconds = value?.getHighBits?.() ?? value?.high;
  return typeof seconds === 'number' && seconds > 0 ? new Date(seconds * 1000) : undefined;
}

/**
 * Reads the oplog window of the replica set member the app talks to: the oldest entry of
 * `local.oplog.rs` (what `db.getReplicationInfo()` reads; needs `find` on the `local` database,
 * which the built-in `clusterMonitor` role grants), else `serverStatus`'s `oplog.earliestOptime`.
 * Without the privilege, or on a server without an oplog, it says why instead of failing.
 */
export async function probeOplogWindow(
  client: mongo.MongoClient,
  serverNow: Date,
): Promise<OplogWindow> {
  const reasons: string[] = [];
  const within = (firstEntryAt: Date, source: 'local.oplog.rs' | 'serverStatus'): OplogWindow => ({
    available: true,
    firstEntryAt,
    windowMs: Math.max(0, serverNow.getTime() - firstEntryAt.getTime()),
    source,
  });
  try {
    const first = await client
      .db('local')
      .collection('oplog.rs')
      .find({}, { sort: { $natural: 1 }, limit: 1, projection: { ts: 1 } })
      .next();
    const at = timestampDate(first?.ts);
    if (at) return within(at, 'local.oplog.rs');
    reasons.push('local.oplog.rs has no entries');
  } catch (error) {
    reasons.push(`local.oplog.rs: ${privilegeHint(error)}`);
  }
  try {
    const status = await client.db('admin').command({ serverStatus: 1, oplog: 1 });
    const at = timestampDate(
      (status.oplog as { earliestOptime?: unknown } | undefined)?.earliestOptime,
    );
    if (at) return within(at, 'serverStatus');
    reasons.push('serverStatus has no oplog section');
  } catch (error) {
    reasons.push(`serverStatus: ${privilegeHint(error)}`);
  }
  return { available: false, reason: reasons.join('; ') };
}

function privilegeHint(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === UNAUTHORIZED) {
    return 'not authorized (grant the clusterMonitor role to see the oplog window)';
  }
  return describeError(error);
}
