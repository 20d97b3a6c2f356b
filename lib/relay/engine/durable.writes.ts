import { describeError } from '../../common/errors/describe-error';
import { backoffDelay } from '../../common/backoff';
import { LeaseLostError } from '../lease/lease-lost.error';
import { abortableSleep } from '../ports/relay-clock';
import type { RelayClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import type { ResolvedRelayOptions } from '../relay.options';

/**
 * Writes that must land before the relay goes on (a failure record, a marker, the first step of
 * a dead-letter move): retried with backoff until they land, the lease runs out, or `abandon`
 * is aborted (the engine gives up on its work: the stop's timeout ran out, or the lease did).
 * A graceful stop does not abandon them: what the broker answered is settled while it stops.
 * A streak of failures is logged once when it starts and once when it ends.
 */
export class DurableWrites {
  private failing = 0;

  constructor(
    private readonly clock: RelayClock,
    private readonly backoff: ResolvedRelayOptions['backoff'],
    private readonly random: () => number,
    private readonly logger: RelayLogger,
    private readonly abandon: AbortSignal,
  ) {}

  /** Resolves true once `write` landed, false when given up (lease lost or abandoned). */
  async run(what: string, write: () => Promise<void>): Promise<boolean> {
    for (let attempt = 1; !this.abandon.aborted; attempt++) {
      try {
        await write();
        if (attempt > 1 && --this.failing === 0) {
          this.logger.log(`Relay writes land again (${what} after ${attempt} attempts).`);
        }
        return true;
      } catch (error) {
        if (error instanceof LeaseLostError) return false;
        if (attempt === 1 && this.failing++ === 0) {
          this.logger.warn(
            `Could not write ${what} (${describeError(error)}); retrying with backoff. The events stay pending meanwhile.`,
          );
        }
        if (this.abandon.aborted) return false;
        await abortableSleep(
          this.clock,
          backoffDelay(attempt, this.backoff, this.random),
          this.abandon,
        );
      }
    }
    return false;
  }
}
