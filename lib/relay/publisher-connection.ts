import { describeError } from '../common/errors/describe-error';
import type { OutboxPublisher } from '../publisher/outbox-publisher.interface';
import type { RelayLogger } from './ports/relay-logger';

/**
 * The publisher's connection as a relay node holds it: connected in the background when the node
 * starts (a broker that is down only delays publishing: `publish()` reconnects), disconnected once
 * when it stops, whether the first connect succeeded, failed, or is still pending.
 */
export class PublisherConnection {
  /** The first connect, settled either way (never rejects); undefined until `open()`. */
  private connecting?: Promise<void>;
  private connectSettled = false;
  private closing?: Promise<void>;

  constructor(
    private readonly publisher: OutboxPublisher,
    private readonly logger: RelayLogger,
  ) {}

  open(): void {
    this.connecting ??= this.publisher.connect().then(
      () => void (this.connectSettled = true),
      (error: unknown) => {
        this.connectSettled = true;
        if (this.closing) return;
        this.logger.warn(
          `The publisher could not connect yet (${describeError(error)}); events wait and are retried.`,
        );
      },
    );
  }

  /**
   * Disconnects at once and, if the first connect is still pending, again once it settled: a
   * producer that connects after the stop began would otherwise keep its sockets open, and the
   * process with them. That second disconnect is not awaited: a connect that never settles (a
   * client retrying for ever) must not hold the application's shutdown.
   */
  close(): Promise<void> {
    const connecting = this.connecting;
    if (!connecting) return Promise.resolve();
    this.closing ??= (async () => {
      const pending = !this.connectSettled;
      await this.publisher.disconnect();
      if (!pending) return;
      connecting
        .then(() => this.publisher.disconnect())
        .catch((error: unknown) => {
          this.logger.warn(`The publisher did not disconnect cleanly: ${describeError(error)}`);
        });
    })();
    return this.closing;
  }
}
