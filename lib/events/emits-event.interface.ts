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
}

/** One `@EmitsEvent` as stored in the `outbox:emits_event` metadata of the method. */
export interface DeclaredEvent extends EmitsEventOptions {
  eventType: string;
}
