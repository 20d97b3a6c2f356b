import type { NewOutboxEvent } from '../documents/outbox-event.document';

/**
 * An event a committed transaction emitted, as `OutboxTesting` recorded it. A scheduled event
 * shows its due time in `availableAt` (resolved as in production: own time, or the testing
 * clock + `delayMs`, raised to its aggregate's latest pending one); a cancelled one has
 * `status: 'cancelled'` and `cancelledAt`, a delivered one `status: 'published'` and
 * `publishedAt` (the testing clock's time), as the relay marks it.
 */
export interface EmittedEvent extends NewOutboxEvent {
  /** 1 for the first transaction that committed events in this test, 2 for the next... */
  transaction: number;
  /** Set once `drain()` delivered it to every handler that listens to it. */
  delivered: boolean;
  /** The `delayMs` the emit asked for (`availableAt` is the due time it gave). */
  delayMs?: number;
  /** `false` when the emit opted out of waiting for its aggregate's scheduled events. */
  waitForScheduled?: false;
  /** With `tenants`: the tenant's database (`databaseOf(tenant)`); `tenant` is the tenant. */
  database?: string;
}

/** What `emitted()` and `expectEmitted()` select; every field given must match. */
export interface EmittedEventFilter {
  eventType?: string;
  aggregateType?: string;
  aggregateId?: string;
  /** A part of the payload: each given key must be equal (deeply) in the event's payload. */
  payload?: Record<string, unknown>;
  /** A part of the headers. */
  headers?: Record<string, string>;
  /** `pending`, `published` (delivered by `drain()`) or `cancelled`. */
  status?: EmittedEvent['status'];
  /** With `tenants`: the tenant the event was emitted for. */
  tenant?: string;
}

/** Deep equality of JSON-like values. */
function equal(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  return (
    keysA.length === keysB.length &&
    keysA.every((key) =>
      equal((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
    )
  );
}

/** Each key of `part` is equal in `whole`. */
function contains(whole: Record<string, unknown> | undefined, part: Record<string, unknown>) {
  return Object.entries(part).every(([key, value]) => equal(whole?.[key], value));
}

export function matchesEmitted(
  event: EmittedEvent,
  filter: EmittedEventFilter | ((event: EmittedEvent) => boolean),
): boolean {
  if (typeof filter === 'function') return filter(event);
  return (
    (filter.eventType === undefined || event.eventType === filter.eventType) &&
    (filter.aggregateType === undefined || event.aggregateType === filter.aggregateType) &&
    (filter.aggregateId === undefined || event.aggregateId === filter.aggregateId) &&
    (filter.payload === undefined || contains(event.payload, filter.payload)) &&
    (filter.headers === undefined || contains(event.headers, filter.headers)) &&
    (filter.status === undefined || event.status === filter.status) &&
    (filter.tenant === undefined || event.tenant === filter.tenant)
  );
}

/** One line per event, for failure messages. */
export function describeEmitted(events: readonly EmittedEvent[]): string {
  if (events.length === 0) return '  (no event was emitted)';
  return events
    .map(
      (e) =>
        `  #${e.transaction} ${e.eventType} ${e.aggregateType}/${e.aggregateId} ${JSON.stringify(e.payload)}` +
        (e.tenant !== undefined ? ` tenant ${e.tenant}` : '') +
        (e.availableAt ? ` due ${e.availableAt.toISOString()}` : '') +
        (e.status === 'pending' ? '' : ` (${e.status})`),
    )
    .join('\n');
}
