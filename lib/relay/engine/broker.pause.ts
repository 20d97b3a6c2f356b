import { backoffDelay } from '../../common/backoff';
import { describeError } from '../../common/errors/describe-error';
import { PublisherConfigurationError } from '../../publisher/errors/publisher-configuration.error';
import type { RelayClock } from '../ports/relay-clock';
import type { RelayLogger } from '../ports/relay-logger';
import type { OutboxRelayMetrics } from '../relay.metrics';
import type { ResolvedRelayOptions } from '../relay.options';

/**
 * The broker-outage pause: while the broker is unreachable nothing is published, retried with
 * its own backoff (up to 30 s); no attempt is counted against the events. Said once when it
 * starts and once when the broker accepts events again. A pause for a configuration error
 * (`PublisherConfigurationError`: credentials, ACLs, client or options the broker refuses) says
 * so instead, and `configurationError()` gives it while the pause lasts (status, health).
 */
export class BrokerPause {
  private until = 0;
  private failures = 0;
  private configuration?: PublisherConfigurationError;

  constructor(
    private readonly clock: RelayClock,
    private readonly backoff: ResolvedRelayOptions['backoff'],
    private readonly logger: RelayLogger,
    private readonly metrics: OutboxRelayMetrics,
  ) {}

  /** ms of the monotonic clock left in the pause, or 0. */
  remaining(monotonicNow = this.clock.monotonic()): number {
    return Math.max(0, this.until - monotonicNow);
  }

  /** When the pause ends, on the wall clock, if one is under way. */
  endsAt(): number | undefined {
    const left = this.remaining();
    return left > 0 ? this.clock.now() + left : undefined;
  }

  /** What stops publishing, "configuration error: <error>...", while a pause for one lasts. */
  configurationError(): string | undefined {
    return this.configuration?.message;
  }

  /** A send failed for the whole broker: pause (longer each time). */
  failed(error: Error): void {
    this.failures++;
    const delay = backoffDelay(this.failures, {
      initialMs: Math.min(this.backoff.initialMs, 1000),
      maxMs: Math.min(this.backoff.maxMs, 30_000),
    });
    this.until = this.clock.monotonic() + delay;
    const configuration = error instanceof PublisherConfigurationError ? error : undefined;
    const changed = configuration?.reason !== this.configuration?.reason;
    this.configuration = configuration;
    if (this.failures === 1) this.metrics.outages++;
    if (configuration && changed) {
      this.logger.warn(
        `Publishing paused: ${configuration.message}. Retried with backoff until it is fixed; ` +
          'no attempt is counted against the events.',
      );
    } else if (this.failures === 1 && !configuration) {
      this.logger.warn(
        `The broker is unavailable (${describeError(error)}); publishing paused and retried with backoff. ` +
          'No attempt is counted against the events.',
      );
    }
  }

  /** The broker accepted events: the outage, if any, is over. */
  accepted(): void {
    if (this.failures === 0) return;
    this.failures = 0;
    this.until = 0;
    this.configuration = undefined;
    this.logger.log('The broker accepts events again; publishing resumed.');
  }
}
