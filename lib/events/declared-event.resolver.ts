import type { DeclaredEvent, EventValue } from './emits-event.interface';
import type { ScheduledEmit } from './outbox.emitter';

/** Turns the `@EmitsEvent` declarations of a method into events, given what the call returned. */
export function resolveDeclaredEvents(
  declared: readonly DeclaredEvent[],
  result: unknown,
  args: unknown[],
): ScheduledEmit[] {
  const valueOf = <V>(value: EventValue<V>): V =>
    typeof value === 'function'
      ? (value as (result: unknown, ...args: unknown[]) => V)(result, ...args)
      : value;
  return declared.map((event) => {
    const headers = valueOf(event.headers);
    const availableAt = valueOf(event.availableAt);
    const delayMs = valueOf(event.delayMs);
    return {
      event: {
        eventType: event.eventType,
        aggregateType: event.aggregateType,
        aggregateId: valueOf(event.aggregateId),
        payload: valueOf(event.payload),
        ...(headers !== undefined ? { headers } : {}),
      },
      schedule: {
        ...(availableAt !== undefined ? { availableAt } : {}),
        ...(delayMs !== undefined ? { delayMs } : {}),
        ...(event.waitForScheduled !== undefined
          ? { waitForScheduled: event.waitForScheduled }
          : {}),
      },
    };
  });
}
