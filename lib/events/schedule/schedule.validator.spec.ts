import 'reflect-metadata';
import { EmitsEvent } from '../emits-event.decorator';
import { InvalidOutboxEventError } from '../errors/invalid-outbox-event.error';
import { InvalidScheduleError } from '../errors/invalid-schedule.error';
import { MAX_SCHEDULE_DELAY_MS, SCHEDULE_PAST_TOLERANCE_MS } from './emit-schedule';
import { validateSchedule } from './schedule.validator';

const NOW = Date.UTC(2026, 0, 1);

function errorOf(schedule: unknown): InvalidScheduleError {
  try {
    validateSchedule(schedule, NOW);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidScheduleError);
    // Existing `catch (InvalidOutboxEventError)` blocks keep catching it.
    expect(error).toBeInstanceOf(InvalidOutboxEventError);
    expect((error as InvalidScheduleError).code).toBe('OUTBOX_INVALID_SCHEDULE');
    return error as InvalidScheduleError;
  }
  throw new Error('expected InvalidScheduleError');
}

describe('schedule validation at emit time', () => {
  it('no schedule: immediate, waiting for the aggregate', () => {
    expect(validateSchedule(undefined, NOW)).toEqual({ wait: true });
    expect(validateSchedule({}, NOW)).toEqual({ wait: true });
    expect(validateSchedule({ waitForScheduled: false }, NOW)).toEqual({ wait: false });
  });

  it('accepts a delay from 0 to the maximum, and a time within the bounds (copied)', () => {
    expect(validateSchedule({ delayMs: 0 }, NOW)).toEqual({ delayMs: 0, wait: true });
    expect(validateSchedule({ delayMs: MAX_SCHEDULE_DELAY_MS }, NOW).delayMs).toBe(
      MAX_SCHEDULE_DELAY_MS,
    );
    const at = new Date(NOW + 1000);
    const checked = validateSchedule({ availableAt: at, waitForScheduled: false }, NOW);
    expect(checked).toEqual({ availableAt: at, wait: false });
    expect(checked.availableAt).not.toBe(at);
    // Within the past tolerance (clock skew): accepted, due at once.
    const justPast = new Date(NOW - SCHEDULE_PAST_TOLERANCE_MS);
    expect(validateSchedule({ availableAt: justPast }, NOW).availableAt).toEqual(justPast);
  });

  it('refuses availableAt and delayMs together, naming both and the fix', () => {
    const error = errorOf({ availableAt: new Date(NOW + 1), delayMs: 5 });
    expect(error.field).toBe('availableAt');
    expect(error.message).toMatch(/availableAt and delayMs are both given; give one of them/);
  });

  it.each([
    ['NaN', NaN],
    ['negative', -1],
    ['not an integer', 1.5],
    ['Infinity', Infinity],
    ['beyond 365 days', MAX_SCHEDULE_DELAY_MS + 1],
    ['a string', '1000'],
    ['null', null],
  ])('refuses a delayMs that is %s', (_what, delayMs) => {
    const error = errorOf({ delayMs });
    expect(error.field).toBe('delayMs');
    expect(error.message).toMatch(/must be a whole number of milliseconds from 0 to 31536000000/);
  });

  it.each([
    ['an invalid Date', new Date('nope')],
    ['a number', NOW + 1000],
    ['a string', new Date(NOW + 1000).toISOString()],
  ])('refuses an availableAt that is %s', (_what, availableAt) => {
    const error = errorOf({ availableAt });
    expect(error.field).toBe('availableAt');
    expect(error.message).toMatch(/must be a valid Date/);
  });

  it('refuses an availableAt in the past beyond the tolerance, or beyond the maximum ahead', () => {
    const past = errorOf({ availableAt: new Date(NOW - SCHEDULE_PAST_TOLERANCE_MS - 1000) });
    expect(past.message).toMatch(/61 s in the past, more than the tolerance of 60 s/);
    const far = errorOf({ availableAt: new Date(NOW + MAX_SCHEDULE_DELAY_MS + 1) });
    expect(far.message).toMatch(/more than 365 days ahead/);
  });

  it('refuses an unknown option (a typo) and a waitForScheduled that is not a boolean', () => {
    expect(errorOf({ delay: 5 }).field).toBe('delay');
    expect(errorOf({ waitForScheduled: 'no' }).field).toBe('waitForScheduled');
    expect(errorOf('soon').field).toBe('schedule');
  });
});

describe('@EmitsEvent schedule options with fixed values are checked when the class is defined', () => {
  const base = { aggregateType: 'Order', aggregateId: 'o', payload: {} };
  const define = (options: Record<string, unknown>) => () => {
    class Service {
      @EmitsEvent('X', { ...base, ...options })
      async run(): Promise<void> {}
    }
    return Service;
  };

  it('refuses both availableAt and delayMs, even as functions, naming the method', () => {
    expect(define({ availableAt: () => new Date(), delayMs: () => 5 })).toThrow(
      /availableAt of @EmitsEvent on Service\.run and delayMs are both given/,
    );
  });

  it('refuses a fixed bad delay or Date, or a non-boolean waitForScheduled', () => {
    expect(define({ delayMs: -5 })).toThrow(InvalidScheduleError);
    expect(define({ delayMs: 2.5 })).toThrow(/delayMs of @EmitsEvent on Service\.run must be/);
    expect(define({ availableAt: new Date('x') })).toThrow(/must be a valid Date/);
    expect(define({ waitForScheduled: 1 })).toThrow(/waitForScheduled of @EmitsEvent/);
  });

  it('accepts functions (checked at emit time) and fixed good values', () => {
    expect(define({ delayMs: () => -1 })).not.toThrow();
    expect(define({ delayMs: 60_000, waitForScheduled: false })).not.toThrow();
  });
});
