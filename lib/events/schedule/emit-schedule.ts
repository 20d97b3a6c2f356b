/**
 * When an emitted event may be published: the second argument of `OutboxEmitter.emit()` and
 * the `availableAt` / `delayMs` / `waitForScheduled` options of `@EmitsEvent`.
 */
export interface EmitSchedule {
  /**
   * The earliest publish time, compared with the MongoDB SERVER's clock. At most
   * `SCHEDULE_PAST_TOLERANCE_MS` in the past (by this process' clock) and at most
   * `MAX_SCHEDULE_DELAY_MS` ahead. Exclusive with `delayMs`.
   */
  availableAt?: Date;
  /**
   * Publish no earlier than this many milliseconds after the rows are written, counted on the
   * MongoDB server's clock inside the transaction (not this process' clock). An integer from 0
   * to `MAX_SCHEDULE_DELAY_MS`. Exclusive with `availableAt`.
   */
  delayMs?: number;
  /**
   * Default true: if the aggregate has pending scheduled events (due or not), this event gets
   * `availableAt = max(own, the latest of theirs)`, so it is published after them (commit order
   * across delays). `false`: the event is not ordered against them (published as soon as its own
   * time allows, possibly before them) and the transaction's read of them is skipped when no event
   * of it waits.
   */
  waitForScheduled?: boolean;
}

/** The longest delay: 365 days (`delayMs`, and `availableAt` from now). */
export const MAX_SCHEDULE_DELAY_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * How far in the past an `availableAt` may be (by this process' clock, checked at emit): one
 * minute, for clock skew between the app and the server and for a time computed a moment
 * earlier. Such an event is due at once (still published in its aggregate's order).
 */
export const SCHEDULE_PAST_TOLERANCE_MS = 60 * 1000;

/** A checked schedule, as the emitter keeps it until the transaction writes its events. */
export interface ScheduleRequest {
  availableAt?: Date;
  delayMs?: number;
  /** `waitForScheduled`, default true. */
  wait: boolean;
}

/** An immediate event that waits for its aggregate's scheduled ones (the default). */
export const IMMEDIATE: ScheduleRequest = Object.freeze({ wait: true });
