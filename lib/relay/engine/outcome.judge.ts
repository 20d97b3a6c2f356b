import { describeError } from '../../common/errors/describe-error';
import type { PublishOutcome } from '../../publisher/outbox-publisher.interface';
import { backoffDelay } from '../../common/backoff';
import type { DeadLetterRecord, FailureRecord } from '../ports/outbox-relay.store';
import type { ResolvedRelayOptions } from '../relay.options';
import type { LaneItem } from './aggregate.lane';

/** What one publish call means for one aggregate, decided by its first event that was not accepted. */
export type LaneVerdict =
  /** Everything accepted. */
  | { kind: 'accepted' }
  /** The broker is unavailable: the events from `from` on stay queued; publishing pauses. */
  | { kind: 'broker'; from: number; error: Error }
  /** A destination refuses: events from `from` on wait for it (pending, marked); no attempt counts. */
  | { kind: 'destination'; from: number; destination: string; error: Error }
  /** Event `at` failed: its failure is recorded, it and the rest wait until `record.nextAttemptAt`. */
  | { kind: 'failure'; at: number; record: FailureRecord }
  /** Event `at` is dead-lettered; the events after it stay queued and go on once that is durable. */
  | { kind: 'dead'; at: number; record: DeadLetterRecord };

export interface LaneJudgement {
  /** Accepted by the broker (whatever their position). */
  accepted: LaneItem[];
  verdict: LaneVerdict;
}

export interface JudgeContext {
  now: number;
  maxAttempts: number;
  backoff: ResolvedRelayOptions['backoff'];
  random: () => number;
}

const ALL_ACCEPTED: LaneVerdict = { kind: 'accepted' };

/** Pure: the consequence of `outcomes` (one per item, in order, from `offset`) for one aggregate's items. */
export function judgeLane(
  items: readonly LaneItem[],
  outcomes: readonly (PublishOutcome | undefined)[],
  context: JudgeContext,
  offset = 0,
): LaneJudgement {
  const accepted: LaneItem[] = [];
  let verdict: LaneVerdict | undefined;
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    const outcome = outcomes[offset + index] ?? {
      status: 'retriable',
      error: new Error('the publisher returned no outcome'),
      scope: 'broker',
    };
    if (outcome.status === 'ok') {
      accepted.push(item);
      continue;
    }
    if (verdict) continue;
    const error = outcome.error;
    if (outcome.status === 'retriable') {
      const scope = outcome.scope ?? (outcome.outage ? 'broker' : 'event');
      if (scope === 'broker') {
        verdict = { kind: 'broker', from: index, error };
        continue;
      }
      if (scope === 'destination' && outcome.destination) {
        verdict = { kind: 'destination', from: index, destination: outcome.destination, error };
        continue;
      }
    }
    const attempts = (item.event.attempts ?? 0) + 1;
    const at = new Date(context.now);
    const text = describeError(error);
    if (outcome.status === 'fatal' || attempts >= context.maxAttempts) {
      const reason = outcome.status === 'fatal' ? 'rejected' : 'max-attempts';
      verdict = { kind: 'dead', at: index, record: { reason, error: text, attempts, at } };
      continue;
    }
    const delay = backoffDelay(attempts, context.backoff, context.random);
    verdict = {
      kind: 'failure',
      at: index,
      record: { attempts, nextAttemptAt: new Date(context.now + delay), error: text, at },
    };
  }
  return { accepted, verdict: verdict ?? ALL_ACCEPTED };
}
