import { InvalidScheduleError } from '../errors/invalid-schedule.error';
import { IMMEDIATE, MAX_SCHEDULE_DELAY_MS, SCHEDULE_PAST_TOLERANCE_MS } from './emit-schedule';
import type { EmitSchedule, ScheduleRequest } from './emit-schedule';

const KEYS = new Set(['availableAt', 'delayMs', 'waitForScheduled']);
const DAYS = MAX_SCHEDULE_DELAY_MS / 86_400_000;

/**
 * Checks the schedule of an emit (`nowMs`: this process' clock, for `availableAt`'s bounds) and
 * returns it normalized. Throws `InvalidScheduleError` naming the field and the fix.
 */
export function validateSchedule(schedule: unknown, nowMs: number): ScheduleRequest {
  if (schedule === undefined) return IMMEDIATE;
  if (schedule === null || typeof schedule !== 'object' || Array.isArray(schedule)) {
    throw new InvalidScheduleError(
      'schedule',
      'must be an object { availableAt?, delayMs?, waitForScheduled? }',
    );
  }
  const unknown = Object.keys(schedule).filter((key) => !KEYS.has(key));
  if (unknown.length > 0) {
    throw new InvalidScheduleError(
      unknown[0],
      'is not a schedule option; use availableAt (a Date), delayMs (milliseconds) or waitForScheduled',
    );
  }
  const { availableAt, delayMs, waitForScheduled } = schedule as EmitSchedule;
  checkExclusive(availableAt, delayMs);
  checkWait(waitForScheduled);
  const wait = waitForScheduled !== false;
  if (delayMs !== undefined) return { delayMs: checkDelay(delayMs), wait };
  if (availableAt !== undefined) return { availableAt: checkAvailableAt(availableAt, nowMs), wait };
  return wait ? IMMEDIATE : { wait };
}

function checkExclusive(availableAt: unknown, delayMs: unknown): void {
  if (availableAt !== undefined && delayMs !== undefined) {
    throw new InvalidScheduleError(
      'availableAt',
      'and delayMs are both given; give one of them (a time, or a delay from the write)',
    );
  }
}

function checkWait(value: unknown): void {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new InvalidScheduleError(
      'waitForScheduled',
      `must be true, false or left out, got ${describe(value)}`,
    );
  }
}

function checkDelay(value: unknown): number {
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < 0 ||
    value > MAX_SCHEDULE_DELAY_MS
  ) {
    throw new InvalidScheduleError(
      'delayMs',
      `must be a whole number of milliseconds from 0 to ${MAX_SCHEDULE_DELAY_MS} (${DAYS} days),` +
        ` got ${describe(value)}. Round it (Math.ceil) or use availableAt for a fixed time`,
      { value: typeof value === 'number' ? value : describe(value) },
    );
  }
  return value;
}

/** A valid Date (a copy); `nowMs` given: also within the past tolerance and the maximum delay. */
function checkAvailableAt(value: unknown, nowMs?: number): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new InvalidScheduleError(
      'availableAt',
      `must be a valid Date, got ${describe(value)}. Use new Date(...) or delayMs for a delay`,
    );
  }
  const at = value.getTime();
  if (nowMs !== undefined && at < nowMs - SCHEDULE_PAST_TOLERANCE_MS) {
    throw new InvalidScheduleError(
      'availableAt',
      `is ${Math.round((nowMs - at) / 1000)} s in the past, more than the tolerance of` +
        ` ${SCHEDULE_PAST_TOLERANCE_MS / 1000} s. Leave the schedule out to publish at once`,
      { availableAt: value.toISOString() },
    );
  }
  if (nowMs !== undefined && at > nowMs + MAX_SCHEDULE_DELAY_MS) {
    throw new InvalidScheduleError(
      'availableAt',
      `is more than ${DAYS} days ahead (the maximum). Schedule it later, closer to its time`,
      { availableAt: value.toISOString() },
    );
  }
  return new Date(at);
}

/**
 * The schedule options of one `@EmitsEvent`, checked when the class is defined: both
 * `availableAt` and `delayMs` given (fixed or functions), a fixed delay out of bounds, a fixed
 * `availableAt` that is not a valid Date, `waitForScheduled` not a boolean. A fixed
 * `availableAt` is checked against the clock at emit time (it may be in the past by then).
 */
export function checkStaticSchedule(
  label: string,
  options: { availableAt?: unknown; delayMs?: unknown; waitForScheduled?: unknown } | undefined,
): void {
  if (!options) return;
  try {
    checkExclusive(options.availableAt, options.delayMs);
    checkWait(options.waitForScheduled);
    if (options.delayMs !== undefined && typeof options.delayMs !== 'function') {
      checkDelay(options.delayMs);
    }
    if (options.availableAt !== undefined && typeof options.availableAt !== 'function') {
      checkAvailableAt(options.availableAt);
    }
  } catch (error) {
    if (!(error instanceof InvalidScheduleError)) throw error;
    const problem = error.message.replace(/^Invalid outbox event: \S+ /, '');
    throw new InvalidScheduleError(error.field, `of @EmitsEvent on ${label} ${problem}`, {
      ...error.context,
      method: label,
    });
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'number') return String(value);
  if (value instanceof Date) return 'an invalid Date';
  return typeof value;
}
