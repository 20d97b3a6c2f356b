/**
 * A value of a declared event: either fixed, or computed from the method's result and arguments
 * (`(result, ...args) => value`), after the method body returned, inside the transaction.
 */
export type EventValue<V, R = any> = V | ((result: R, ...args: any[]) => V);

/** Second argument of `@EmitsEvent(eventType, options)`. */
export interface EmitsEventOptions<R = any> {
  /** Fixed: it is part of the topic name. Checked when the class is defined. */
  aggregateType: string;
  aggregateId: EventValue<string, R>;
  payload: EventValue<Record<string, unknown>, R>;
  headers?: EventValue<Record<string, string> | undefined, R>;
  /**
   * Publish no earlier than this time (server clock); a function may return undefined (not
   * scheduled). Exclusive with `delayMs`. See `EmitSchedule` for the bounds.
   */
  availableAt?: EventValue<Date | undefined, R>;
  /**
   * Publish no earlier than this many ms after the write (server clock); a function may return
   * undefined (not scheduled). Exclusive with `availableAt`.
   */
  delayMs?: EventValue<number | undefined, R>;
  /** Default true: wait for the aggregate's pending scheduled events. Fixed. */
  waitForScheduled?: boolean;
}

/** One `@EmitsEvent` as stored in the `outbox:emits_event` metadata of the method. */
export interface DeclaredEvent extends EmitsEventOptions {
  eventType: string;
}
