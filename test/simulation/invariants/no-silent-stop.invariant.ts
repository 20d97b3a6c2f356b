import type { SimRunOutcome, SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/**
 * (h) No silent stop, judged from what the simulated server saw, never from what a relay
 * reports: at the end (faults over, everything out, the run went on quietly for `settle`),
 * in runs with the single lease (or a partitioned run whose layout has one partition):
 * - exactly one live relay incarnation holds the lease by the server's clock;
 * - it follows the change stream: it asked its cursor for more (`cursor.next`) within the
 *   last `idleMs` + `backoff.maxMs` + 4 one-way latencies + 100 ms; every event that became
 *   visible after its term began and the faults ended (+ `renewMs`) was handed to it by the
 *   stream (not only found by a sweep), unless the stream is still delivering (a lagging
 *   stream replays a backlog); and the checkpoint (landed writes) covers the last committed
 *   transaction or moved on within the last 2 x (`checkpointEvery.ms` + `idleMs`) +
 *   `backoff.maxMs` + 8 one-way latencies + 200 ms;
 * - it still renews its lease and sweeps (the store calls it issued);
 * - with tenant databases (tenants family): the events judged are those of databases listed
 *   since before they were visible; a resting database's sweep is its `hasPending` check; the
 *   cluster-wide stream keeps its position in memory only (`ClusterCheckpointState`), so no
 *   checkpoint is judged; with no database listed at the end, only the lease is;
 * `stop()` of every relay finishes and does not throw; no promise rejection went unhandled.
 */
export class NoSilentStopInvariant implements InvariantChecker {
  readonly id = 'h';
  readonly name = 'no silent stop';
  private readonly violations: string[] = [];
  private checked = 0;

  beforeStop(world: SimWorld): void {
    // Partitioned runs with more than one partition: (p) judges who holds what at the end.
    if (world.partitioned && (world.db.layout?.partitions ?? 1) > 1) return;
    const options = world.schedule.options;
    const now = world.now;
    const scope = world.partitioned ? 'any' : undefined;
    const live = world.nodes.filter((node) => node.relay && node.owner && node.process.isAlive);
    const holders = live.filter((node) =>
      world.db.holdsLease(node.owner as string, undefined, scope),
    );
    this.checked++;
    if (holders.length !== 1) {
      this.violations.push(
        `${now}: ${holders.length} live relays hold the lease by the server's clock (live: ${live
          .map((node) => node.owner)
          .join(', ')})`,
      );
      return;
    }
    const owner = holders[0].owner as string;
    const issuedSince = (names: string[], since: number): boolean =>
      world.history.storeOps.some(
        (op) => op.owner === owner && names.includes(op.name) && op.issuedAt >= since,
      );
    // A leader since less than a period has not had to do it yet.
    const leaderSince = Math.max(
      0,
      ...world.history.leases
        .filter((lease) => lease.owner === owner && lease.kind === 'acquire')
        .map((lease) => lease.at),
    );
    const due = (periodMs: number): boolean =>
      now - leaderSince >= periodMs + 2 * options.idleMs + 200;
    if (
      due(options.lease.renewMs) &&
      !issuedSince(['renewLease'], now - 2 * options.lease.renewMs - 100)
    ) {
      this.violations.push(
        `${now}: the leader did not renew its lease in the last ${2 * options.lease.renewMs} ms`,
      );
    }
    // Tenants: with no database listed, there is nothing to sweep or read.
    if (world.tenants?.list().length === 0) return;
    if (
      due(options.sweepIntervalMs) &&
      !issuedSince(
        ['findStaleEvents', 'pendingStats', 'findMarkedDead', 'hasPending'],
        now - 2 * options.sweepIntervalMs - 100,
      )
    ) {
      this.violations.push(
        `${now}: the leader did not sweep in the last ${2 * options.sweepIntervalMs} ms`,
      );
    }
    this.judgeStream(world, owner, leaderSince);
  }

  /** The holder's stream: polled lately, every recent event handed by it, the checkpoint at the end. */
  private judgeStream(world: SimWorld, owner: string, leaderSince: number): void {
    const { history, schedule } = world;
    const options = schedule.options;
    const now = world.now;
    const pollWindow =
      options.idleMs + options.backoff.maxMs + 4 * schedule.world.dbLatencyMs + 100;
    let lastPoll = -1;
    for (const op of history.storeOps)
      if (op.owner === owner && op.name === 'cursor.next')
        lastPoll = Math.max(lastPoll, op.issuedAt);
    if (now - leaderSince > pollWindow && now - lastPoll > pollWindow) {
      this.violations.push(
        `${now}: the lease holder ${owner} has not asked its change stream for more since ${lastPoll < 0 ? 'ever' : lastPoll} (window ${pollWindow} ms)`,
      );
    }
    // A stream that lags (a backlog replayed slowly) is not stopped: it must move on.
    const progressWindow =
      2 * (options.checkpointEvery.ms + options.idleMs) +
      options.backoff.maxMs +
      8 * schedule.world.dbLatencyMs +
      200;
    const recent = now - progressWindow;
    const streamed = new Set<string>();
    let lastDelivery = -1;
    for (const fact of history.portFlow) {
      if (fact.kind !== 'handed' || fact.via !== 'stream' || fact.owner !== owner) continue;
      lastDelivery = Math.max(lastDelivery, fact.at);
      for (const doc of fact.docs) streamed.add(doc.docId);
    }
    const since = Math.max(leaderSince, world.timing.quietAt) + options.lease.renewMs;
    const committed = history.committed();
    const tenants = world.tenants;
    const followed = (commit: (typeof committed)[number]): boolean =>
      !tenants ||
      (commit.database !== undefined &&
        tenants.listedSince(commit.database, commit.majorityAt as number) &&
        !tenants.excuse(commit));
    const missed = committed.filter(
      (commit) =>
        (commit.majorityAt as number) > since && !streamed.has(commit.docId) && followed(commit),
    );
    if (missed.length > 0 && lastDelivery < recent) {
      this.violations.push(
        `${now}: ${missed.length} event(s) visible after ${since} never came to the lease holder ${owner} by its stream, ` +
          `which delivered nothing since ${lastDelivery} (${missed
            .slice(0, 3)
            .map((commit) => commit.eventId)
            .join(', ')}...)`,
      );
    }
    const last = committed.reduce<number>((pos, commit) => Math.max(pos, commit.pos), -1);
    if (last < 0 || tenants) return;
    let before = -1;
    let after = -1;
    for (const fact of history.checkpoints) {
      if (!fact.landed || fact.kind === 'clear') continue;
      const pos = (fact.token as { pos?: number } | undefined)?.pos ?? -1;
      after = Math.max(after, pos);
      if (fact.at <= recent) before = Math.max(before, pos);
    }
    if (after < last && after <= before) {
      this.violations.push(
        `${now}: the checkpoint stays at oplog position ${after} (last committed transaction: ${last}), ` +
          `not moved in the last ${progressWindow} ms`,
      );
    }
  }

  finish(world: SimWorld, outcome: SimRunOutcome): InvariantResult {
    const violations = [
      ...this.violations,
      ...outcome.stopProblems,
      ...world.history.unhandled.map((reason) => `unhandled rejection: ${reason}`),
    ];
    return {
      id: this.id,
      name: this.name,
      checked: this.checked + 1,
      violations: capped(violations),
    };
  }
}
