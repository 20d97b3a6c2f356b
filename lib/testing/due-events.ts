import type { EmittedEvent } from './emitted-event';

/**
 * The events of `pending` due at `now`, in the order the relay publishes them: immediate events
 * first, then scheduled ones by due time; ties (and each aggregate's events, whose due times never
 * decrease in commit order unless one opted out of waiting) in commit order.
 */
export function dueInOrder(pending: readonly EmittedEvent[], now: Date): EmittedEvent[] {
  return pending
    .map((event, index) => ({ event, index }))
    .filter(({ event }) => !event.availableAt || event.availableAt <= now)
    .sort(
      (a, b) =>
        (a.event.availableAt?.getTime() ?? -Infinity) -
          (b.event.availableAt?.getTime() ?? -Infinity) || a.index - b.index,
    )
    .map(({ event }) => event);
}
