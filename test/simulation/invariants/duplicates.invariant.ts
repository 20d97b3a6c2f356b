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
  | 'late lease answer'
  | 'stop timed out'
  | 'ambiguous ack'
  | 'partial failure'
  | 'failed mark';

/**
 * (e) Duplicates: every second (or later) append of an event has a cause between its first
 * append and this one: a crash, a leadership change after a lease ran out (a new fencing
 * number on a lease its holder did not release while it was valid, or a renewal landing after its
 * lease ran out: the holder lapsed, though nobody took the lease meanwhile), a renewal answered
 * after the relay's own view of its lease ran out (its holder could write nothing in between, so
 * what the broker acknowledged then went unmarked), a stop that abandoned
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
    if (this.lateAnswers(world).some(within)) return 'late lease answer';
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
  private lateAnswerTimes?: number[];

  /** When a renewal's answer reached its relay after its local view of the lease ran out. */
  private lateAnswers(world: SimWorld): number[] {
    if (this.lateAnswerTimes) return this.lateAnswerTimes;
    const ops = new Map(world.history.storeOps.map((op) => [op.opId, op]));
    const rates = world.schedule.faults
      .filter((fault) => fault.kind === 'clock-drift')
      .map((fault) => 1 + fault.param / 1e6);
    this.lateAnswerTimes = lateLeaseAnswers(
      world.history.leases,
      (opId) => ops.get(opId)?.answeredAt,
      world.schedule.options.lease,
      Math.min(1, ...rates),
    );
    return this.lateAnswerTimes;
  }

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

/**
 * Renewals that landed in time by the server's clock but whose answer reached the relay after its
 * own view of the lease had run out, as answer times: a lapse all the same (the relay's "the lease
 * answer came too late"). The relay counts itself leader for `durationMs - ceil(renewMs / 3)` of
 * its own elapsed time from the start of the tick that acquired or renewed; that start came before
 * the server read the time the grant's expiry counts from (`expiresAt - durationMs`), so the local
 * view ran out at the latest that validity after the read (divided by the slowest clock rate of the
 * run). Until the late answer the relay refused its writes (`LeaseLostError`): the marks of what
 * the broker acknowledged then were never sent, and a graceful stop that renews while it settles
 * (and then releases in time) leaves them to the next holder. A relay that simply stopped renewing
 * has no such answer: its lease ran out without one, and a release in time after it stays no cause.
 */
export function lateLeaseAnswers(
  leases: readonly LeaseFact[],
  answeredAt: (opId: number) => number | undefined,
  lease: { durationMs: number; renewMs: number },
  slowestClockRate = 1,
): number[] {
  const validity = (lease.durationMs - Math.ceil(lease.renewMs / 3)) / slowestClockRate;
  const grants = new Map<string, LeaseFact>();
  const times: number[] = [];
  for (const fact of leases) {
    const scope = fact.scope ?? '';
    const grant = grants.get(scope);
    if (fact.kind === 'release') {
      grants.delete(scope);
      continue;
    }
    if (
      fact.kind === 'renew' &&
      grant !== undefined &&
      grant.owner === fact.owner &&
      grant.fencing === fact.fencing &&
      fact.opId !== undefined
    ) {
      const localEnd = grant.expiresAt - SIM_EPOCH_MS - lease.durationMs + validity;
      const answered = answeredAt(fact.opId);
      if (answered !== undefined && answered >= localEnd) times.push(answered);
    }
    grants.set(scope, fact);
  }
  return times;
}
