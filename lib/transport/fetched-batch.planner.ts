/** One fetched message, with what decides whether it joins its neighbours in one transaction. */
export interface RunCandidate<T> {
  item: T;
  /** Its handler's group (same `runtime` and `consumer`: one batch), or none: applied alone. */
  group?: {
    runtime: object;
    consumer: string;
    maxEvents: number;
    maxBytes: number;
    /** Its `ce_tenant` header (with tenants, a batch holds one tenant's events). */
    tenant?: string;
  };
  /** Its size (value, key, headers) counted against `maxBytes`. */
  bytes: number;
}

export interface PlannedRun<T> {
  items: T[];
  /** Set when the run is to be tried as one transaction (two or more events of one group). */
  group?: NonNullable<RunCandidate<T>['group']>;
}

/**
 * Cuts a partition's fetched messages, in order, into runs: consecutive messages of one group
 * (one runtime, consumer and tenant), up
 * to its `maxEvents` messages and `maxBytes` bytes (a message larger than `maxBytes` alone);
 * every other message is a run of its own. Order is kept: the runs, concatenated, are the input.
 */
export function planRuns<T>(candidates: readonly RunCandidate<T>[]): PlannedRun<T>[] {
  const runs: PlannedRun<T>[] = [];
  let open: { run: PlannedRun<T>; bytes: number } | undefined;
  for (const { item, group, bytes } of candidates) {
    const joins =
      open?.run.group !== undefined &&
      group !== undefined &&
      open.run.group.runtime === group.runtime &&
      open.run.group.consumer === group.consumer &&
      open.run.group.tenant === group.tenant &&
      open.run.items.length < group.maxEvents &&
      open.bytes + bytes <= group.maxBytes;
    if (joins) {
      open!.run.items.push(item);
      open!.bytes += bytes;
      continue;
    }
    open = { run: { items: [item], ...(group ? { group } : {}) }, bytes };
    runs.push(open.run);
  }
  for (const run of runs) if (run.items.length < 2) delete run.group;
  return runs;
}
