import type { StreamState } from '../relay.status';
import type { TermStatus } from './leader-term';

/** What each of several terms reports that the whole sums up. */
type PartStatus = Pick<
  TermStatus,
  | 'stream'
  | 'streamError'
  | 'brokerPausedUntil'
  | 'configurationError'
  | 'heldDestinations'
  | 'trackedAggregates'
>;

/** The stream state of several: the worst one (retrying, then draining, then following). */
export function worstStream(states: readonly StreamState[]): StreamState {
  const order: StreamState[] = ['retrying', 'draining', 'following'];
  return order.find((state) => states.includes(state)) ?? 'stopped';
}

/**
 * Several terms (the partitions an instance holds, the tenant databases one term follows) as
 * one status: the worst stream, the first error of each kind, every held destination, the
 * aggregates summed, and the in-flight figures of the budget they share.
 */
export function combinedStatus(
  parts: readonly PartStatus[],
  inFlight: { events: number; bytes: number },
): Omit<TermStatus, 'tenants'> {
  return {
    stream: worstStream(parts.map((part) => part.stream)),
    streamError: parts.find((part) => part.streamError)?.streamError,
    brokerPausedUntil: parts.find((part) => part.brokerPausedUntil)?.brokerPausedUntil,
    configurationError: parts.find((part) => part.configurationError)?.configurationError,
    heldDestinations: parts.flatMap((part) => part.heldDestinations),
    inFlight,
    trackedAggregates: parts.reduce((sum, part) => sum + part.trackedAggregates, 0),
  };
}
