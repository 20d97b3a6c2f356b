import type { SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/**
 * (s3) Never once cancelled: a scheduled event the server cancelled before it was due (the
 * cancelling transaction found it pending with `availableAt` after the server's now, and it
 * became majority-committed and was never rolled back; `history.cancelled()`) is never
 * appended to Kafka, before or after the cancellation: the application was told `cancelled`.
 * A cancellation rolled back by a stepdown did not happen: its event must go out ((a), (s2)).
 * Also: a cancelled event stays `cancelled` in the outbox (never marked published).
 */
export class CancelledInvariant implements InvariantChecker {
  readonly id = 's3';
  readonly name = 'scheduled: never once cancelled';

  finish(world: SimWorld): InvariantResult {
    const { history } = world;
    const cancelled = history.cancelled();
    const violations: string[] = [];
    const reported = new Set<string>();
    for (const append of history.appends) {
      const cancel = cancelled.get(append.eventId);
      if (!cancel || reported.has(append.eventId)) continue;
      reported.add(append.eventId);
      violations.push(
        `${append.eventId} (cancel of ${cancel.label}, due at ${cancel.availableAt}) was appended to ` +
          `${append.topic}/${append.partition} at ${append.at} by ${append.node}, though the server ` +
          `cancelled it at ${cancel.at} (majority-committed at ${cancel.majorityAt})`,
      );
    }
    for (const eventId of cancelled.keys()) {
      const doc = world.db.inspect(eventId);
      if (doc && doc.status !== 'cancelled') {
        violations.push(`${eventId} was cancelled but is ${doc.status} in the outbox at the end`);
      }
    }
    const outcomes = new Map<string, number>();
    for (const fact of history.cancels) {
      const key = `cancels ${fact.outcome}${fact.rolledBackAt !== undefined ? ' (rolled back)' : ''}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    }
    return {
      id: this.id,
      name: this.name,
      checked: cancelled.size,
      violations: capped(violations),
      counts: Object.fromEntries(outcomes),
    };
  }
}
