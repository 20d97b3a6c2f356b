import { InvalidScheduleError } from '../errors/invalid-schedule.error';
import { checkAvailableAt, checkDelay, checkExclusive, checkWait } from './schedule.validator';

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
