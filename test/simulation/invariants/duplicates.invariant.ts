import type { AppendFact } from '../world/sim.history';
import type { SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/** Why an event may legitimately reach Kafka more than once. */
export type DuplicateCause =
  'crash' | 'leader change' | 'ambiguous ack' | 'partial failure' | 'failed mark';

/**
 * (e) Duplicates: every second (or later) append of an event has a cause between its first
 * append and this one: a crash, a leadership change (a new fencing number), an ambiguous ack
 * of that event (appended, then an error), a send call containing it that failed in part
 * (kafkajs resends the whole request), or a `markPublished` of it that failed or was never
 * answered. Counts duplicates by cause.
 */
export class DuplicatesInvariant implements InvariantChecker {
  readonly id = 'e';
  readonly name = 'duplicates only with a cause';

  finish(world: SimWorld): InvariantResult {
    const history = world.history;
    const byEvent = new Map<string, AppendFact[]>();
    for (const append of history.appends) {
      const list = byEvent.get(append.eventId);
      if (list) list.push(append);
      else byEvent.set(append.eventId, [append]);
    }
    const counts: Record<string, number> = {};
    const violations: string[] = [];
    let checked = 0;
    for (const [eventId, appends] of byEvent) {
      const first = appends[0];
      for (const append of appends.slice(1)) {
        checked++;
        const cause = this.causeOf(world, eventId, first, append, appends);
        if (cause) counts[cause] = (counts[cause] ?? 0) + 1;
        else {
          violations.push(
            `${eventId} appended again at ${append.at} by ${append.node} (call ${append.callId}); first at ` +
              `${first.at} by ${first.node} (call ${first.callId}); no crash, leader change, ambiguous ack, ` +
              `partial failure or failed mark in between`,
          );
        }
      }
    }
    counts.total = checked;
    return { id: this.id, name: this.name, checked, violations: capped(violations), counts };
  }

  private causeOf(
    world: SimWorld,
    eventId: string,
    first: AppendFact,
    again: AppendFact,
    appends: AppendFact[],
  ): DuplicateCause | undefined {
    const history = world.history;
    const within = (at: number): boolean => at >= first.at && at <= again.at;
    if (history.processes.some((fact) => fact.kind === 'crash' && within(fact.at))) return 'crash';
    if (history.leases.some((lease) => lease.kind === 'acquire' && within(lease.at)))
      return 'leader change';
    if (appends.some((append) => append.ambiguous && append.at >= first.at && append.at < again.at))
      return 'ambiguous ack';
    const calls = history.sendCalls.filter(
      (call) =>
        call.failedAttempts > 0 &&
        call.appended.includes(eventId) &&
        call.issuedAt <= again.at &&
        (call.callId === first.callId || within(call.issuedAt)),
    );
    if (calls.length > 0) return 'partial failure';
    const failedMark = history.storeOps.some(
      (op) =>
        op.name === 'markPublished' &&
        op.issuedAt >= first.at &&
        op.issuedAt <= again.at &&
        op.outcome !== undefined &&
        (op.outcome !== 'ok' || op.answered === false) &&
        (op.ids ?? []).includes(history.commits.get(eventId)?.docId ?? ''),
    );
    return failedMark ? 'failed mark' : undefined;
  }
}
