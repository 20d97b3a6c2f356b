import type { SimRunOutcome, SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/**
 * (a) Liveness: once faults stopped and their after-effects ended (`quietAt`, sim-world.ts) and
 * the writers finished, every committed event
 * (majority-committed, never rolled back) is on Kafka or marked dead within the bound of
 * `livenessBound` (sim-world.ts, formula there); every event marked dead reached the
 * dead-letter collection and left the outbox by the end.
 */
export class LivenessInvariant implements InvariantChecker {
  readonly id = 'a';
  readonly name = 'liveness';

  finish(world: SimWorld, outcome: SimRunOutcome): InvariantResult {
    const { quietAt, writesEnd, bound } = world.timing;
    const quiet = Math.max(quietAt, writesEnd);
    const first = world.history.firstAppends();
    const violations: string[] = [];
    const committed = world.history.committed();
    for (const commit of committed) {
      const published = first.get(commit.eventId)?.at;
      const dead = world.history.deadMarked.get(commit.eventId);
      const doneAt = Math.min(published ?? Infinity, dead ?? Infinity);
      const deadline = Math.max(quiet, commit.majorityAt ?? 0) + bound;
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
      checked: committed.length,
      violations: capped(violations),
    };
  }
}
