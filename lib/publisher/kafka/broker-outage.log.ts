import type { LoggerService } from '@nestjs/common';
import { describeError } from '../../common/errors/describe-error';
import { PublisherConfigurationError } from '../errors/publisher-configuration.error';
import type { PublishOutcome } from '../outbox-publisher.interface';
import { SendAbortedError } from './kafka.sender';
import type { KafkaClientName } from './kafka.sender';

const REPORT_EVERY_MS = 60_000;

/** Where each client's own lines go (one per retry of each connection during an outage). */
const CLIENT_LINES: Record<KafkaClientName, string> = {
  kafkajs: "kafkajs's own lines at debug level",
  // Its `debug` namespaces (`loggers`, dist/utils.js): nothing reaches the Nest logger.
  platformatic: "@platformatic/kafka's own lines: DEBUG=plt:kafka:*",
};

/**
 * What the publisher says while the broker stays unavailable. The relay logs an outage when it
 * starts and when it ends (RelayEngine: "The broker is unavailable ..." and "... publishing
 * resumed"), the client's own lines (one per retry of each connection) go to debug (kafkajs) or
 * to its `DEBUG` namespaces (platformatic), and in between this says, at most once a minute, how
 * long it has lasted and how many sends failed. A pause for a configuration error
 * (`PublisherConfigurationError`) is said to be one, not an outage.
 */
export class BrokerOutageLog {
  private since?: number;
  private reportedAt = 0;
  private failures = 0;

  constructor(
    private readonly logger: LoggerService,
    private readonly now: () => number,
    /** The client that produces, whose own lines the report points to. */
    private readonly client: KafkaClientName = 'kafkajs',
  ) {}

  /**
   * The outcomes of one publish call: an accepted event ends an outage, a broker failure starts
   * or extends it (a call the relay gave up on, `SendAbortedError`, is neither).
   */
  observe(outcomes: readonly PublishOutcome[]): void {
    if (outcomes.some((outcome) => outcome.status === 'ok')) {
      this.since = undefined;
      return;
    }
    for (const outcome of outcomes) {
      if (outcome.status !== 'retriable' || outcome.scope !== 'broker') continue;
      if (!(outcome.error instanceof SendAbortedError)) this.failed(outcome.error);
      return;
    }
  }

  private failed(error: Error): void {
    const now = this.now();
    if (this.since === undefined) {
      this.since = now;
      this.reportedAt = now;
      this.failures = 0;
    }
    this.failures++;
    if (now - this.reportedAt < REPORT_EVERY_MS) return;
    this.reportedAt = now;
    if (error instanceof PublisherConfigurationError) {
      this.logger.warn(
        `Kafka still refuses the relay after ${duration(now - this.since)}: ${this.failures} sends failed so far ` +
          `(last: ${error.message}); publishing stays paused until it is fixed.`,
      );
      return;
    }
    this.logger.warn(
      `Kafka still unavailable for ${duration(now - this.since)}: ${this.failures} sends failed so far ` +
        `(last: ${describeError(error)}); publishing stays paused (${CLIENT_LINES[this.client]}).`,
    );
  }
}

function duration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}
