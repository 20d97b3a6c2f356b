import { OutboxError } from '../common/errors/outbox.error';

/** An `OutboxTesting` expectation that does not hold; the message lists what was emitted. */
export class OutboxExpectationError extends OutboxError {
  constructor(message: string) {
    super(message, 'OUTBOX_EXPECTATION_FAILED');
  }
}

/** `OutboxTesting.drain()` found handlers that failed; the message names them and their errors. */
export class OutboxDrainError extends OutboxError {
  constructor(
    readonly failures: ReadonlyArray<{
      eventId: string;
      eventType: string;
      handler: string;
      error: unknown;
    }>,
  ) {
    super(
      `${failures.length} delivery(ies) failed during drain():\n` +
        failures
          .map(
            (f) =>
              `  ${f.handler} on ${f.eventType} ${f.eventId}: ${(f.error as Error)?.message ?? String(f.error)}`,
          )
          .join('\n'),
      'OUTBOX_DRAIN_FAILED',
    );
  }
}
