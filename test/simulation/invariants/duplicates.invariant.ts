import type { AppendFact, LeaseFact } from '../world/sim.history';
import { SIM_EPOCH_MS } from '../process/sim-process';
import { GRACEFUL_EXIT } from '../world/sim-world';
import type { SimWorld } from '../world/sim-world';
import { capped } from './invariant';
import type { InvariantChecker, InvariantResult } from './invariant';

/** Why an event may legitimately reach Kafka more than once. */
export type DuplicateCause =
  | 'crash'
  | 'leader change'
  | 'stop timed out'
  | 'ambiguous ack'
  | 'partial failure'
  | 'failed mark';

/**
 * (e) Duplicates: every second (or later) append of an event has a cause between its first
 * append and this one: a crash, a leadership change after a lease ran out (a new fencing
 * number on a lease its holder did not release while it was valid, or a renewal landing after its
 * lease ran out: the holder lapsed, though nobody took the lease meanwhile), a stop that abandoned
 * publishes after `shutdownTimeoutMs`, an ambiguous ack of that event (appended, then an
 * error), a send call containing it that failed in part (kafkajs resends the whole request),
 * or a `markPublished` of it that failed or was never answered. Counts duplicates by cause.
 *
 * A graceful stop (`stop()`, then the process exits) and a hand-over with a valid lease (the
 * holder released it before it ran out, the next holder acquired it) are no cause: the term
 * settles what the broker acknowledged before it releases the lease.
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
              `${first.at} by ${first.node} (call ${first.callId}); no crash, take-over of a lease not released in ` +
              `time, stop that abandoned publishes, ambiguous ack, partial failure or failed mark in between`,
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
    const crashed = history.processes.some(
      (fact) => fact.kind === 'crash' && fact.detail !== GRACEFUL_EXIT && within(fact.at),
    );
    if (crashed) return 'crash';
    if (this.takeOvers(world).some(within)) return 'leader change';
    // A call issued before the stop gave up on it may still land after: its abandonment counts
    // from the call's issue, not from its append.
    const firstIssuedAt =
      history.sendCalls.find((call) => call.callId === first.callId)?.issuedAt ?? first.at;
    const abandoned = history.logs.some(
      (log) =>
        log.message.includes(ABANDONED_AT_STOP) && log.at >= firstIssuedAt && log.at <= again.at,
    );
    if (abandoned) return 'stop timed out';
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

  private takeOverTimes?: number[];

  /** When a lease was acquired other than from a holder that released it while it was valid. */
  private takeOvers(world: SimWorld): number[] {
    this.takeOverTimes ??= takeOvers(world.history.leases);
    return this.takeOverTimes;
  }
}

/** What the relay logs when `stop()` abandons publishes after `shutdownTimeoutMs`. */
const ABANDONED_AT_STOP = 'were abandoned';

/**
 * Acquires of a lease scope that are not a graceful hand-over: the scope's previous holder did
 * not release it before it ran out by the server's clock (it crashed, paused, was cut off, or
 * it is the scope's first holder: the events of a layout switch were published under another
 * scope); and renewals that landed after the lease they renew ran out (a lapse of its holder).
 */
export function takeOvers(leases: readonly LeaseFact[]): number[] {
  const scopes = new Map<string, { expiresAt: number; releasedInTime: boolean }>();
  const times: number[] = [];
  for (const lease of leases) {
    const scope = lease.scope ?? '';
    const holder = scopes.get(scope);
    if (lease.kind === 'acquire') {
      if (!holder?.releasedInTime) times.push(lease.at);
      scopes.set(scope, { expiresAt: lease.expiresAt, releasedInTime: false });
    } else if (lease.kind === 'renew') {
      // A renewal that lands after the lease ran out (nobody took it meanwhile) is a lapse all
      // the same: from the expiry on, its holder could not write under it, so what the broker
      // acknowledged to it then went unmarked (a paused graceful stop), and the renewal does not
      // bring that back. Counted at the renewal (a call issued before the expiry may land after).
      if (holder !== undefined && lease.at >= holder.expiresAt - SIM_EPOCH_MS) times.push(lease.at);
      scopes.set(scope, { expiresAt: lease.expiresAt, releasedInTime: false });
    } else if (holder) {
      holder.releasedInTime = lease.at < holder.expiresAt - SIM_EPOCH_MS;
    }
  }
  return times;
}
