import type { StoredCheckpoint } from '../relay/ports/relay-state.store';
import type { PartitionStatus } from '../relay/relay.status';
import type { OplogWindow } from './oplog-window.probe';
import type { CheckpointReport, PartitionHealth, PartitionsReport } from './outbox-health.report';
import type { StoredPartitionedRelay } from '../relay/ports/relay-state.reader';
import { resumeTokenTime } from './resume-token.time';

export const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

/** The lag sentence: of the whole outbox, or of `partition` (its number and holder). */
export const lagProblem = (ageMs: number, maxLagMs: number, partition?: string) =>
  `${partition ? `Partition ${partition}: the` : 'The'} oldest pending event is ${seconds(ageMs)} old (limit ${seconds(maxLagMs)}).`;

/** How long before `serverNow` the time `at` was, ms (0 for a time after it). */
export const msSince = (at: Date, serverNow: Date) =>
  Math.max(0, serverNow.getTime() - at.getTime());

/** A stored checkpoint as reported: its position's time (token, else save time) and age. */
export function checkpointReport(
  stored: StoredCheckpoint | undefined,
  serverNow: Date,
): CheckpointReport {
  const tokenTime = stored?.token !== undefined ? resumeTokenTime(stored.token) : undefined;
  const positionAt = tokenTime ?? (stored?.token !== undefined ? stored.savedAt : undefined);
  return {
    saved: stored?.token !== undefined,
    ...(stored?.savedAt ? { savedAt: stored.savedAt } : {}),
    ...(positionAt
      ? {
          positionAt,
          positionTimeFrom: tokenTime ? ('resume-token' as const) : ('saved-at' as const),
          ageMs: msSince(positionAt, serverNow),
        }
      : {}),
  };
}

/**
 * A saved position against the oplog window: the share of the window it uses, and what is
 * wrong with it (older than the oplog, or older than `maxUse` of the window), when known.
 * `subject` names the position in the sentence.
 */
export function oplogVerdict(
  checkpoint: CheckpointReport,
  window: OplogWindow,
  maxUse: number,
  subject = 'The saved stream position',
): { used?: number; problem?: string } {
  const { ageMs, positionAt } = checkpoint;
  if (!window.available || ageMs === undefined || !positionAt) return {};
  const used = window.windowMs > 0 ? ageMs / window.windowMs : 1;
  if (positionAt < window.firstEntryAt) {
    return {
      used,
      problem: `${subject} (${positionAt.toISOString()}) is older than the oplog (first entry ${window.firstEntryAt.toISOString()}): the relay cannot resume from it and recovers from the collection (slower, nothing is lost).`,
    };
  }
  if (used > maxUse) {
    return {
      used,
      problem: `${subject} is ${seconds(ageMs)} old, ${Math.round(used * 100)}% of the oplog window (${seconds(window.windowMs)}; limit ${Math.round(maxUse * 100)}%): start a relay, or it falls off the oplog in about ${seconds(window.windowMs - ageMs)}.`,
    };
  }
  return { used };
}

export interface PartitionsInput {
  stored: StoredPartitionedRelay;
  serverNow: Date;
  /**
   * This instance's relay (absent in an app without one): its `relay.partitions` and its
   * status's `partitions` (undefined while it runs the single lease).
   */
  relay?: { configured: number; partitions?: readonly PartitionStatus[] };
  maxLagMs: number;
  window: OplogWindow;
  maxUse: number;
  /** Age of the oldest pending event of the whole outbox (any slot, or none). */
  oldestPendingAgeMs?: number;
}

export interface PartitionsVerdict {
  partitions: PartitionsReport;
  /** What makes this instance unhealthy. */
  problems: string[];
  /** What is wrong in the deployment, not with this instance. */
  degraded: string[];
  /** The oldest position among the partitions judged, and its share of the oplog window. */
  checkpoint: CheckpointReport & { partition?: number };
  used?: number;
}

const list = (numbers: readonly number[]) => numbers.join(', ');
const heldBy = (part: PartitionHealth) =>
  part.owner !== undefined ? `held by ${part.owner}` : 'held by nobody';

/**
 * The health of a partitioned deployment as one instance judges it.
 *
 * An instance with a relay answers for the partitions it holds, by the single relay's rules:
 * down when one of them has a pending event older than `maxLagMs`, or when the oldest of their
 * saved positions uses more than `maxUse` of the oplog window. An app without a relay answers
 * for the outbox as a whole, as before (the global lag, the oldest position of all partitions).
 *
 * What no instance can fix by itself is `degraded`, never a failure: partitions without a live
 * lease (nobody relays them: every instance would fail its probe at once, and a restart of
 * healthy instances does not bring a partition back; a live relay takes a free partition at
 * its next membership tick, within `lease.durationMs` of a crash), and lag or an aging position
 * in partitions other instances hold (their own health reports it). Events that stay unheld
 * longer than `maxLagMs` still turn an app without a relay down through the lag.
 */
export function judgePartitions(input: PartitionsInput): PartitionsVerdict {
  const { stored, serverNow, relay, maxLagMs, window, maxUse } = input;
  const now = serverNow.getTime();
  const ownStatus = new Map(
    (relay?.partitions ?? [])
      .filter((status) => status.owned && status.partition < stored.partitions)
      .map((status) => [status.partition, status]),
  );
  const each: PartitionHealth[] = stored.each.map((part) => {
    const own = ownStatus.get(part.partition);
    const live = part.lease && part.lease.expiresAt.getTime() > now ? part.lease : undefined;
    const owner = own?.owner ?? live?.owner;
    const fencing = own ? own.fencing : live?.fencing;
    return {
      partition: part.partition,
      ...(owner !== undefined ? { owner } : {}),
      owned: own !== undefined,
      ...(fencing !== undefined ? { fencing } : {}),
      stream: own?.stream ?? 'stopped',
      ...(own?.inFlight ? { inFlightEvents: own.inFlight.events } : {}),
      ...(own?.pendingCount !== undefined ? { pendingCount: own.pendingCount } : {}),
      ...(part.oldestPendingAt
        ? { oldestPendingAgeMs: msSince(part.oldestPendingAt, serverNow) }
        : {}),
      checkpoint: checkpointReport(part.checkpoint, serverNow),
    };
  });
  const owned = each.filter((part) => part.owned).map((part) => part.partition);
  const unheld = each.filter((part) => part.owner === undefined).map((part) => part.partition);
  const judged = relay ? each.filter((part) => part.owned) : each;
  const others = relay ? each.filter((part) => !part.owned) : [];
  const problems: string[] = [];
  const degraded: string[] = [];

  if (relay && relay.configured !== stored.partitions) {
    degraded.push(
      `This instance is configured with relay.partitions ${relay.configured}, the stored layout has ${stored.partitions} (generation ${stored.generation}): it relays nothing of that layout and switches once no lease of it is valid.`,
    );
  }
  if (unheld.length > 0) {
    degraded.push(
      `No relay holds partition${unheld.length > 1 ? 's' : ''} ${list(unheld)} of ${stored.partitions} (no live lease): ${unheld.length > 1 ? 'their' : 'its'} events wait until a live relay takes ${unheld.length > 1 ? 'them' : 'it'} (at its next membership tick).`,
    );
  }

  const overLimit = (part: PartitionHealth) =>
    part.oldestPendingAgeMs !== undefined && part.oldestPendingAgeMs > maxLagMs;
  const oldest = input.oldestPendingAgeMs;
  if (relay) {
    for (const part of judged.filter(overLimit)) {
      const partition = `${part.partition} (held by this instance)`;
      problems.push(lagProblem(part.oldestPendingAgeMs!, maxLagMs, partition));
    }
    for (const part of others.filter(overLimit)) {
      const partition = `${part.partition} (${heldBy(part)})`;
      degraded.push(lagProblem(part.oldestPendingAgeMs!, maxLagMs, partition));
    }
    const inPartitions = Math.max(-1, ...each.map((part) => part.oldestPendingAgeMs ?? -1));
    if (oldest !== undefined && oldest > maxLagMs && oldest > inPartitions) {
      degraded.push(
        `The oldest pending event (${seconds(oldest)} old, limit ${seconds(maxLagMs)}) has no slot yet (written by a version before slots): the relay holding partition 0 stamps it.`,
      );
    }
  } else if (oldest !== undefined && oldest > maxLagMs) {
    problems.push(lagProblem(oldest, maxLagMs));
  }

  // Saved positions against the oplog window: the oldest of the judged partitions decides.
  const byAge = (parts: PartitionHealth[]) =>
    parts
      .filter((part) => part.checkpoint.positionAt !== undefined)
      .sort((a, b) => a.checkpoint.positionAt!.getTime() - b.checkpoint.positionAt!.getTime());
  const [decider] = byAge(judged);
  let checkpoint: PartitionsVerdict['checkpoint'] = { saved: false };
  let used: number | undefined;
  if (decider) {
    checkpoint = { ...decider.checkpoint, partition: decider.partition };
    const verdict = oplogVerdict(
      decider.checkpoint,
      window,
      maxUse,
      `The saved stream position of partition ${decider.partition}`,
    );
    used = verdict.used;
    if (verdict.problem) problems.push(verdict.problem);
  } else {
    const saved = judged.find((part) => part.checkpoint.saved || part.checkpoint.savedAt);
    if (saved) checkpoint = { ...saved.checkpoint, partition: saved.partition };
  }
  for (const part of byAge(others)) {
    const { problem } = oplogVerdict(
      part.checkpoint,
      window,
      maxUse,
      `The saved stream position of partition ${part.partition} (${heldBy(part)})`,
    );
    if (problem) degraded.push(problem);
  }

  return {
    partitions: {
      count: stored.partitions,
      generation: stored.generation,
      ...(relay ? { configured: relay.configured } : {}),
      owned,
      unheld,
      each,
    },
    problems,
    degraded,
    checkpoint,
    ...(used !== undefined ? { used } : {}),
  };
}
