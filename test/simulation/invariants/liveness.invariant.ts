import type { SimRunOutcome, SimWorld } from '../world/sim-world';
import type { CommitFact } from '../world/sim.history';
import { dueLatencyMs } from './event-deadlines';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/**
 * (a) Liveness: once faults stopped and their after-effects ended (`quietAt`, sim-world.ts) and
 * the writers finished, every committed event
 * (majority-committed, never rolled back) is on Kafka or marked dead within the bound of
 * `livenessBound` (sim-world.ts, formula there); every event marked dead reached the
 * dead-letter collection and left the outbox by the end. A scheduled event counts from when it
 * is due + `dueLatencyMs` if that is later; a cancelled one (`history.cancelled()`) never has to
 * go out ((s3) says it must not).
 */
export class LivenessInvariant implements InvariantChecker {
  readonly id = 'a';
  readonly name = 'liveness';

  finish(world: SimWorld, outcome: SimRunOutcome): InvariantResult {
    const { quietAt, writesEnd, bound } = world.timing;
    const quiet = Math.max(quietAt, writesEnd);
    const first = world.history.firstAppends();
    const violations: string[] = [];
    const cancelled = world.history.cancelled();
    const committed = world.history.committed().filter((commit) => !cancelled.has(commit.eventId));
    const dueLatency = dueLatencyMs(world);
    let excused = 0;
    for (const commit of committed) {
      const excuse = world.tenants?.excuse(commit);
      if (excuse) {
        excused++;
        const lost =
          excuse === 'released' && !first.has(commit.eventId) && lostEvent(world, commit);
        if (lost) violations.push(lost);
        continue;
      }
      const published = first.get(commit.eventId)?.at;
      const dead = world.history.deadMarked.get(commit.eventId);
      const doneAt = Math.min(published ?? Infinity, dead ?? Infinity);
      const due = commit.availableAt === undefined ? 0 : commit.availableAt + dueLatency;
      const deadline = Math.max(quiet, commit.majorityAt ?? 0, due) + bound;
      if (doneAt === Infinity) {
        const doc = world.db.inspect(commit.eventId);
        violations.push(
          `${commit.eventId} (${commit.aggregate}, committed at ${commit.committedAt}, majority at ${commit.majorityAt}) ` +
            `was never published nor dead-lettered (run ended at ${outcome.endedAt}; deadline ${deadline}; ` +
            `outbox status ${doc?.status ?? 'gone'}${doc?.nextAttemptAt ? `, nextAttemptAt set, attempts ${doc.attempts}` : ''})`,
        );
      } else if (doneAt > deadline) {
        violations.push(
          `${commit.eventId} (${commit.aggregate}) went out at ${doneAt}, after its deadline ${deadline}`,
        );
      }
    }
    for (const eventId of world.history.deadMarked.keys()) {
      const doc = world.db.inspect(eventId);
      if (doc?.status === 'dead' || !world.db.deadLetters.has(eventId)) {
        violations.push(
          `${eventId} was marked dead but its move to the dead-letter collection did not finish ` +
            `(in dead letters: ${world.db.deadLetters.has(eventId)}, still in outbox: ${doc !== undefined})`,
        );
      }
    }
    return {
      id: this.id,
      name: this.name,
      checked: committed.length - excused,
      violations: capped(violations),
      ...(world.tenants ? { counts: { 'events of databases let go or dropped': excused } } : {}),
    };
  }
}

/**
 * An event of a tenant database let go (no longer listed) and never published must still be
 * pending there (or dead-lettered): letting a database go loses nothing.
 */
function lostEvent(world: SimWorld, commit: CommitFact): string | undefined {
  if (world.history.deadMarked.has(commit.eventId)) return undefined;
  const doc = world.db.inspect(commit.eventId);
  if (doc?.status === 'pending') return undefined;
  return (
    `${commit.eventId} (${commit.aggregate}) of ${commit.database}, let go, was never published ` +
    `and is not pending (outbox status ${doc?.status ?? 'gone'})`
  );
}
