import type { TenantDatabaseStatus } from '../relay.status';
import { worstStream } from '../term/combined-status';

/**
 * The tenant databases as several partitions' terms of one instance report them, one entry per
 * database: followed when any of them follows it (its stream the worst of theirs), its events
 * in memory and pending summed (each partition counts its own slots), its oldest pending age
 * the oldest of theirs. Undefined when none of them reports tenants.
 */
export function combinedTenants(
  lists: ReadonlyArray<readonly TenantDatabaseStatus[] | undefined>,
): TenantDatabaseStatus[] | undefined {
  const reported = lists.filter((list) => list !== undefined);
  if (reported.length === 0) return undefined;
  const byDatabase = new Map<string, TenantDatabaseStatus[]>();
  for (const one of reported.flat()) {
    byDatabase.set(one.database, [...(byDatabase.get(one.database) ?? []), one]);
  }
  return [...byDatabase.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([database, parts]) => combine(database, parts));
}

function combine(database: string, parts: TenantDatabaseStatus[]): TenantDatabaseStatus {
  const followed = parts.filter((part) => part.state === 'followed');
  const counted = (pick: (part: TenantDatabaseStatus) => number | undefined) => {
    const values = parts.map(pick).filter((value) => value !== undefined);
    return values.length > 0 ? values : undefined;
  };
  const pending = counted((part) => part.pendingCount);
  const ages = counted((part) => part.oldestPendingAgeMs);
  const inFlight = parts.filter((part) => part.inFlight).map((part) => part.inFlight!);
  return {
    database,
    state: followed.length > 0 ? 'followed' : 'released',
    stream: followed.length > 0 ? worstStream(followed.map((part) => part.stream)) : 'stopped',
    ...(inFlight.length > 0
      ? {
          inFlight: {
            events: inFlight.reduce((sum, one) => sum + one.events, 0),
            bytes: inFlight.reduce((sum, one) => sum + one.bytes, 0),
          },
        }
      : {}),
    ...(pending ? { pendingCount: pending.reduce((sum, n) => sum + n, 0) } : {}),
    ...(ages ? { oldestPendingAgeMs: Math.max(...ages) } : {}),
  };
}
