import type { AggregateRef, OutboxRelayStore } from '../ports/outbox-relay.store';

/** Aggregates with marks read at once. */
const PAGE = 1000;

/**
 * Every aggregate with a marked pending event, page by page in the store's order, handed to
 * `visit` one at a time (awaited); stops early once `go()` is false. Returns how many were
 * visited. The term's start-up load and the engine's rescan both read them this way.
 */
export async function forEachRetryingAggregate(
  outbox: Pick<OutboxRelayStore, 'findRetryingAggregates'>,
  go: () => boolean,
  visit: (aggregate: AggregateRef & { retryAt: Date }) => void | Promise<void>,
): Promise<number> {
  let after: AggregateRef | undefined;
  let total = 0;
  while (go()) {
    const page = await outbox.findRetryingAggregates(after, PAGE);
    for (const aggregate of page) {
      const visited = visit(aggregate);
      if (visited) await visited;
    }
    total += page.length;
    if (page.length < PAGE) break;
    after = page[page.length - 1];
  }
  return total;
}
