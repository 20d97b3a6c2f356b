import type { OutboxEventInput } from '../documents/outbox-event.envelope';
import type { DeclaredEvent, EventValue } from './emits-event.interface';

function valueOf<V>(value: EventValue<V>, result: unknown, args: unknown[]): V {
  return typeof value === 'function'
    ? (value as (result: unknown, ...args: unknown[]) => V)(result, ...args)
    : value;
}

/** Turns the `@EmitsEvent` declarations of a method into events, given what the call returned. */
export function resolveDeclaredEvents(
  declared: readonly DeclaredEvent[],
  result: unknown,
  args: unknown[],
): OutboxEventInput[] {
  return declared.map((event) => {
    const headers = event.headers === undefined ? undefined : valueOf(event.headers, result, args);
    return {
      eventType: event.eventType,
      aggregateType: event.aggregateType,
      aggregateId: valueOf(event.aggregateId, result, args),
      payload: valueOf(event.payload, result, args),
      ...(headers !== undefined ? { headers } : {}),
    };
  });
}
