import type { DeclaredEvent, EventValue } from './emits-event.interface';
import type { ScheduledEmit } from './outbox.emitter';

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
): ScheduledEmit[] {
  return declared.map((event) => {
    const headers = event.headers === undefined ? undefined : valueOf(event.headers, result, args);
    const availableAt =
      event.availableAt === undefined ? undefined : valueOf(event.availableAt, result, args);
    const delayMs = event.delayMs === undefined ? undefined : valueOf(event.delayMs, result, args);
    return {
      event: {
        eventType: event.eventType,
        aggregateType: event.aggregateType,
        aggregateId: valueOf(event.aggregateId, result, args),
        payload: valueOf(event.payload, result, args),
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
